import Foundation

/// A zip package read from memory, enough for hosted content: stored and deflated entries, no
/// encryption, no zip64, no multi-disk archives. Every entry's CRC-32 is checked, and names that
/// would leave the destination (`..`, absolute paths, drive letters) or symbolic links are refused.
struct ZipArchive {
    /// One entry of the central directory.
    struct Entry: Hashable {
        var name: String
        var method: UInt16
        var flags: UInt16
        var crc32: UInt32
        var compressedSize: Int
        var size: Int
        var localHeaderOffset: Int
        var isSymbolicLink: Bool
        var isDirectory: Bool { name.hasSuffix("/") }
    }

    private let bytes: Data

    /// Whether `data` starts like a zip file (`PK\u{3}\u{4}`).
    static func isZip(_ data: Data) -> Bool {
        data.count >= 4 && data.prefix(4).elementsEqual([0x50, 0x4B, 0x03, 0x04])
    }

    init(_ data: Data) { bytes = data }

    /// The entries listed in the central directory.
    func entries() throws(KakinError) -> [Entry] {
        let end = try endOfCentralDirectory()
        let total = try u16(end + 10)
        var offset = Int(try u32(end + 16))
        guard try u16(end + 4) == 0, try u16(end + 6) == 0, total != 0xFFFF, try u32(end + 16) != 0xFFFF_FFFF else {
            throw Self.failure("zip64 and multi-disk archives are not supported")
        }
        var entries: [Entry] = []
        for _ in 0..<total {
            guard try u32(offset) == 0x0201_4B50 else { throw Self.failure("a central directory entry is damaged") }
            let madeBy = try u16(offset + 4)
            let compressed = try u32(offset + 20)
            let size = try u32(offset + 24)
            guard compressed != 0xFFFF_FFFF, size != 0xFFFF_FFFF else {
                throw Self.failure("zip64 entries are not supported")
            }
            let nameLength = Int(try u16(offset + 28))
            let extraLength = Int(try u16(offset + 30))
            let commentLength = Int(try u16(offset + 32))
            let mode = (try u32(offset + 38)) >> 16
            let nameBytes = try slice(offset + 46, nameLength)
            let name = String(bytes: nameBytes, encoding: .utf8) ?? String(bytes: nameBytes, encoding: .isoLatin1) ?? ""
            entries.append(
                Entry(
                    name: name, method: try u16(offset + 10), flags: try u16(offset + 8), crc32: try u32(offset + 16),
                    compressedSize: Int(compressed), size: Int(size), localHeaderOffset: Int(try u32(offset + 42)),
                    isSymbolicLink: madeBy >> 8 == 3 && mode & 0xF000 == 0xA000))
            offset += 46 + nameLength + extraLength + commentLength
        }
        return entries
    }

    /// Writes every entry under `folder`, creating folders as needed.
    func extract(into folder: URL) throws(KakinError) {
        let fileManager = FileManager.default
        for entry in try entries() {
            let components = try Self.safeComponents(entry.name)
            guard !entry.isSymbolicLink else { throw Self.failure("\(entry.name) is a symbolic link") }
            var target = folder
            for component in components { target.appendPathComponent(component) }
            guard target.standardizedFileURL.path.hasPrefix(folder.standardizedFileURL.path + "/") else {
                throw Self.failure("\(entry.name) would be written outside the content folder")
            }
            do {
                if entry.isDirectory {
                    try fileManager.createDirectory(at: target, withIntermediateDirectories: true)
                    continue
                }
                let contents = try data(of: entry)
                try fileManager.createDirectory(
                    at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try contents.write(to: target)
            } catch let error as KakinError {
                throw error
            } catch {
                throw KakinError(.storage, "cannot write \(entry.name): \(error)", isRetryable: true)
            }
        }
    }

    /// The uncompressed bytes of `entry`, checked against its size and CRC-32.
    func data(of entry: Entry) throws(KakinError) -> Data {
        guard entry.flags & 1 == 0 else { throw Self.failure("\(entry.name) is encrypted") }
        let local = entry.localHeaderOffset
        guard try u32(local) == 0x0403_4B50 else { throw Self.failure("the local header of \(entry.name) is damaged") }
        let start = local + 30 + Int(try u16(local + 26)) + Int(try u16(local + 28))
        let stored = try slice(start, entry.compressedSize)
        let contents: Data
        switch entry.method {
        case 0:
            guard entry.compressedSize == entry.size else { throw Self.failure("\(entry.name) has a wrong size") }
            contents = stored
        case 8:
            do {
                contents = Data(try Inflate.decompress(Array(stored), expectedSize: entry.size))
            } catch {
                throw Self.failure("\(entry.name) cannot be inflated: \(error)")
            }
        default:
            throw Self.failure(
                "\(entry.name) uses compression method \(entry.method); only stored and deflate are supported")
        }
        guard CRC32.checksum(contents) == entry.crc32 else { throw Self.failure("\(entry.name) fails its CRC-32") }
        return contents
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

    /// The offset of the end-of-central-directory record, searched from the end past any comment.
    private func endOfCentralDirectory() throws(KakinError) -> Int {
        guard bytes.count >= 22 else { throw Self.failure("the archive is too short") }
        let lowest = max(0, bytes.count - 22 - 0xFFFF)
        var offset = bytes.count - 22
        while offset >= lowest {
            if try u32(offset) == 0x0605_4B50 { return offset }
            offset -= 1
        }
        throw Self.failure("no end of central directory")
    }

    private func slice(_ offset: Int, _ count: Int) throws(KakinError) -> Data {
        guard offset >= 0, count >= 0, offset <= bytes.count - count else {
            throw Self.failure("the archive is truncated")
        }
        let start = bytes.startIndex + offset
        return bytes[start..<start + count]
    }

    private func u16(_ offset: Int) throws(KakinError) -> UInt16 {
        let raw = try slice(offset, 2)
        return UInt16(raw[raw.startIndex]) | UInt16(raw[raw.startIndex + 1]) << 8
    }

    private func u32(_ offset: Int) throws(KakinError) -> UInt32 {
        let raw = try slice(offset, 4)
        var value: UInt32 = 0
        for index in (0..<4).reversed() { value = value << 8 | UInt32(raw[raw.startIndex + index]) }
        return value
    }
}

/// CRC-32 (IEEE, as zip uses).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// The CRC-32 of `data`.
    static func checksum(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
