import Foundation
import ZIPFoundation

/// A hosted-content zip package, unpacked with ZIPFoundation: stored and deflated entries, zip64,
/// every entry's CRC-32 checked. Names that would leave the destination (`..`, absolute paths,
/// drive letters) and symbolic links are refused before anything is written.
struct ZipArchive {
    private let archive: Archive

    /// Whether `data` starts like a zip file (`PK\u{3}\u{4}`).
    static func isZip(_ data: Data) -> Bool {
        data.count >= 4 && data.prefix(4).elementsEqual([0x50, 0x4B, 0x03, 0x04])
    }

    /// Opens the package at `url` for reading.
    init(url: URL) throws(KakinError) {
        do { archive = try Archive(url: url, accessMode: .read) } catch {
            throw Self.failure("it is not a readable zip archive (\(error))")
        }
    }

    /// Opens a package held in memory.
    init(_ data: Data) throws(KakinError) {
        do { archive = try Archive(data: data, accessMode: .read) } catch {
            throw Self.failure("it is not a readable zip archive (\(error))")
        }
    }

    /// Writes every entry under `folder`, creating folders as needed. Every name is checked before
    /// the first byte is written, so a package with one bad entry leaves nothing behind.
    func extract(into folder: URL) throws(KakinError) {
        var planned: [(Entry, URL)] = []
        for entry in archive {
            let components = try Self.safeComponents(entry.path)
            guard entry.type != .symlink else { throw Self.failure("\(entry.path) is a symbolic link") }
            var target = folder
            for component in components { target.appendPathComponent(component) }
            guard target.standardizedFileURL.path.hasPrefix(folder.standardizedFileURL.path + "/") else {
                throw Self.failure("\(entry.path) would be written outside the content folder")
            }
            planned.append((entry, target))
        }
        for (entry, target) in planned {
            do {
                if entry.type == .directory || entry.path.hasSuffix("/") {
                    try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
                } else {
                    let checksum = try archive.extract(entry, to: target, skipCRC32: false)
                    guard checksum == entry.checksum else {
                        throw Self.failure("\(entry.path) fails its CRC-32")
                    }
                }
            } catch let error as KakinError {
                throw error
            } catch let error as Archive.ArchiveError {
                throw Self.failure("\(entry.path) cannot be read: \(error)")
            } catch {
                throw KakinError(.storage, "cannot write \(entry.path): \(error)", isRetryable: true)
            }
        }
    }

    /// The path components of an entry name, refusing any that could leave the destination.
    static func safeComponents(_ name: String) throws(KakinError) -> [String] {
        guard !name.isEmpty, !name.contains("\0") else { throw failure("an entry has an empty or invalid name") }
        guard !name.hasPrefix("/"), !name.hasPrefix("\\") else { throw failure("\(name) is an absolute path") }
        let parts = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).map(String.init)
        guard !parts.contains("..") else { throw failure("\(name) climbs out of the content folder") }
        guard !(parts.first?.contains(":") ?? false) else { throw failure("\(name) names a drive") }
        let components = parts.filter { $0 != "." }
        guard !components.isEmpty else { throw failure("an entry has an empty name") }
        return components
    }

    private static func failure(_ message: String) -> KakinError {
        KakinError(.downloadFailed, "the content package cannot be unpacked: \(message)")
    }
}
