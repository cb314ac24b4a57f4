import Crypto
import Foundation

/// What is kept beside a partial file (`<id>.json` next to `<id>.part`) so that a download can
/// resume, also in a new process.
struct DownloadRecord: Codable, Hashable, Sendable {
    var id: String
    var productID: String
    var url: URL
    var headers: [String: String]
    var transactionID: String?
    /// The package's `ETag`, sent back as `If-Range`.
    var etag: String?
    /// Lowercase hex SHA-256 of the whole package, from `X-Content-SHA256` or the `ETag`.
    var expectedSHA256: String?
    var contentLength: Int64?
    var bytesReceived: Int64
    var contentVersion: String?
    var createdAt: Date

    /// Forgets everything learnt from the server, to start again from byte zero.
    mutating func restart() {
        etag = nil
        expectedSHA256 = nil
        contentLength = nil
        bytesReceived = 0
        contentVersion = nil
    }
}

/// The files of downloads: partial data and sidecars in one folder, unpacked content in another.
struct DownloadStore: Sendable {
    let downloads: URL
    let content: URL

    private var fileManager: FileManager { FileManager.default }

    func partURL(_ id: String) -> URL { downloads.appendingPathComponent(id + ".part") }
    func sidecarURL(_ id: String) -> URL { downloads.appendingPathComponent(id + ".json") }

    /// Sidecars found on disk, with the partial file trimmed to what the sidecar vouches for.
    func loadRecords() -> [DownloadRecord] {
        guard let names = try? fileManager.contentsOfDirectory(atPath: downloads.path) else { return [] }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        var records: [DownloadRecord] = []
        for name in names where name.hasSuffix(".json") {
            guard let data = try? Data(contentsOf: downloads.appendingPathComponent(name)),
                var record = try? decoder.decode(DownloadRecord.self, from: data),
                name == record.id + ".json"
            else { continue }
            let onDisk =
                (try? fileManager.attributesOfItem(atPath: partURL(record.id).path)[.size] as? NSNumber)?
                .int64Value ?? 0
            if onDisk < record.bytesReceived {
                // The sidecar ran ahead of the data (a crash): keep only what is really there.
                record.bytesReceived = onDisk
            } else if onDisk > record.bytesReceived {
                // Data written after the last sidecar: not vouched for, drop it.
                try? truncate(record.id, to: record.bytesReceived)
            }
            if record.bytesReceived == 0 { record.restart() }
            records.append(record)
        }
        return records.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// Writes the sidecar (atomically).
    func save(_ record: DownloadRecord) throws(KakinError) {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        do {
            try fileManager.createDirectory(at: downloads, withIntermediateDirectories: true)
            try encoder.encode(record).write(to: sidecarURL(record.id), options: .atomic)
        } catch {
            throw KakinError(.storage, "cannot write the download record: \(error)", isRetryable: true)
        }
    }

    /// Writes `bytes` at `offset` of the partial file and cuts anything after them.
    func write(_ bytes: Data, at offset: Int64, id: String) throws(KakinError) {
        let url = partURL(id)
        do {
            try fileManager.createDirectory(at: downloads, withIntermediateDirectories: true)
            if !fileManager.fileExists(atPath: url.path) {
                guard fileManager.createFile(atPath: url.path, contents: nil) else {
                    throw CocoaError(.fileWriteUnknown)
                }
            }
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            try handle.truncate(atOffset: UInt64(offset))
            try handle.seek(toOffset: UInt64(offset))
            try handle.write(contentsOf: bytes)
        } catch {
            throw KakinError(.storage, "cannot write the partial download: \(error)", isRetryable: true)
        }
    }

    /// Cuts the partial file to `length` bytes.
    func truncate(_ id: String, to length: Int64) throws {
        let url = partURL(id)
        guard fileManager.fileExists(atPath: url.path) else { return }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.truncate(atOffset: UInt64(length))
    }

    /// Deletes the partial file and its sidecar.
    func remove(_ id: String) {
        try? fileManager.removeItem(at: partURL(id))
        try? fileManager.removeItem(at: sidecarURL(id))
    }

    /// Lowercase hex SHA-256 of the partial file, read in slices.
    func sha256(_ id: String) throws -> String {
        let handle = try FileHandle(forReadingFrom: partURL(id))
        defer { try? handle.close() }
        var hasher = SHA256()
        while let slice = try handle.read(upToCount: 1 << 20), !slice.isEmpty { hasher.update(data: slice) }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// Checks the whole package against its SHA-256, unpacks it into
    /// `<content>/<productID>/<version>/` (through a temporary folder and a rename) and deletes the
    /// partial data. Returns the content folder and the version used.
    func install(_ record: DownloadRecord) throws(KakinError) -> (url: URL, version: String) {
        guard let expected = record.expectedSHA256 else {
            remove(record.id)
            throw KakinError(.downloadFailed, "the server gave no SHA-256 for the content of \(record.productID)")
        }
        let actual: String
        do { actual = try sha256(record.id) } catch {
            throw KakinError(.storage, "cannot read the downloaded package: \(error)", isRetryable: true)
        }
        guard actual == expected else {
            remove(record.id)
            throw KakinError(
                .downloadFailed, "hash mismatch: the package of \(record.productID) is \(actual), expected \(expected)")
        }
        let version = record.contentVersion ?? String(actual.prefix(16))
        let productFolder = content.appendingPathComponent(Self.safeName(record.productID))
        let destination = productFolder.appendingPathComponent(Self.safeName(version))
        let staging = productFolder.appendingPathComponent(".unpacking-" + UUID().uuidString)
        do {
            try fileManager.createDirectory(at: staging, withIntermediateDirectories: true)
        } catch {
            throw KakinError(.storage, "cannot create \(staging.path): \(error)", isRetryable: true)
        }
        do {
            let packageURL = partURL(record.id)
            let head = try FileHandle(forReadingFrom: packageURL)
            let magic = try head.read(upToCount: 4) ?? Data()
            try head.close()
            if ZipArchive.isZip(magic) {
                try ZipArchive(url: packageURL).extract(into: staging)
            } else {
                try FileManager.default.copyItem(at: packageURL, to: staging.appendingPathComponent("content.bin"))
            }
            if fileManager.fileExists(atPath: destination.path) { try fileManager.removeItem(at: destination) }
            try fileManager.moveItem(at: staging, to: destination)
        } catch {
            try? fileManager.removeItem(at: staging)
            if let error = error as? KakinError {
                if !error.isRetryable { remove(record.id) }
                throw error
            }
            throw KakinError(.storage, "cannot unpack the content of \(record.productID): \(error)", isRetryable: true)
        }
        remove(record.id)
        return (destination, version)
    }

    /// The newest unpacked version of a product's content, if any.
    func installedContent(productID: String) -> URL? {
        let folder = content.appendingPathComponent(Self.safeName(productID))
        let keys: [URLResourceKey] = [.contentModificationDateKey, .isDirectoryKey]
        guard let entries = try? fileManager.contentsOfDirectory(at: folder, includingPropertiesForKeys: keys)
        else { return nil }
        let versions = entries.filter { !$0.lastPathComponent.hasPrefix(".") }
            .compactMap { url -> (URL, Date)? in
                guard let values = try? url.resourceValues(forKeys: Set(keys)), values.isDirectory == true else {
                    return nil
                }
                return (url, values.contentModificationDate ?? .distantPast)
            }
        return versions.max { $0.1 < $1.1 }?.0
    }

    /// A product ID or version as one safe folder name: no separators, no `.`/`..`.
    static func safeName(_ text: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        var name = String(text.map { allowed.contains($0) ? $0 : "_" })
        if name.isEmpty || name.allSatisfy({ $0 == "." }) { name = "_" + name }
        if name.hasPrefix(".") { name = "_" + name }
        return name
    }
}
