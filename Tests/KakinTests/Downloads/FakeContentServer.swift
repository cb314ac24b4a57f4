import Crypto
import Foundation
import Kakin

/// An in-memory content server with HTTP range semantics (`Range`, `If-Range`, `ETag`,
/// `Content-Range`), counting requests and able to fail, change or corrupt the package.
actor FakeContentServer: DownloadTransport {
    /// One request as the server saw it.
    struct Request: Sendable {
        var url: URL
        var headers: [String: String]
        var range: String? { headers["Range"] }
        var ifRange: String? { headers["If-Range"] }
    }

    private(set) var package: Data
    private(set) var version: String
    private(set) var requests: [Request] = []
    private var failures: [Int: any Error] = [:]
    private var corruptedIndex: Int?
    private var forcedStatus: Int?
    private var sendsSHAHeader = true
    private var hook: (@Sendable (Int) async -> Void)?
    private var requiredCustomerToken: String?
    private let clock: TestClock?

    init(package: Data, version: String = "1", clock: TestClock? = nil) {
        self.package = package
        self.version = version
        self.clock = clock
    }

    /// The quoted SHA-256 of the package, as the server's ETag.
    var etag: String { "\"" + Self.sha256(package) + "\"" }

    static func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    /// Replaces the package (a new version, so a new ETag).
    func replace(with package: Data, version: String) {
        self.package = package
        self.version = version
    }

    /// Throws `error` from request number `request` (1-based).
    func fail(request: Int, with error: any Error) { failures[request] = error }

    /// Serves the package with one byte flipped, under the real package's hash.
    func corrupt(byteAt index: Int) { corruptedIndex = index }

    /// Answers every request with `status` and no body.
    func answer(status: Int) { forcedStatus = status }

    /// Leaves out `X-Content-SHA256` and `X-Content-Version`, like the sandbox.
    func omitContentHeaders() { sendsSHAHeader = false }

    /// From now on, answers 401 (cause `customerTokenExpired`) to requests without this customer token.
    func requireCustomerToken(_ token: String) { requiredCustomerToken = token }

    /// Runs `hook` with the request number at the start of every request.
    func onRequest(_ hook: @escaping @Sendable (Int) async -> Void) { self.hook = hook }

    func fetch(
        url: URL, headers: [String: String], range: (offset: Int64, length: Int64?)
    ) async throws -> (status: Int, headers: [String: String], body: Data) {
        requests.append(Request(url: url, headers: headers))
        let number = requests.count
        clock?.advance(by: 1)
        await hook?(number)
        if let error = failures.removeValue(forKey: number) { throw error }
        if let forcedStatus { return (forcedStatus, [:], Data()) }
        if let requiredCustomerToken, headers["X-Kakin-Customer-Token"] != requiredCustomerToken {
            let refusal = #"{"error":{"code":"unauthorized","message":"expired","retryable":false,"cause":"customerTokenExpired"}}"#
            return (401, ["Content-Type": "application/json"], Data(refusal.utf8))
        }
        var served = package
        if let corruptedIndex, corruptedIndex < served.count { served[corruptedIndex] ^= 0xFF }
        var fields = ["ETag": etag, "Accept-Ranges": "bytes", "Content-Type": "application/octet-stream"]
        if sendsSHAHeader {
            fields["X-Content-SHA256"] = Self.sha256(package)
            fields["X-Content-Version"] = version
        }
        let stale = headers["If-Range"].map { $0 != etag } ?? false
        guard let header = headers["Range"], !stale else { return (200, fields, served) }
        let bounds = header.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
        guard let lower = Int(bounds[0]), lower < served.count else {
            fields["Content-Range"] = "bytes */\(served.count)"
            return (416, fields, Data())
        }
        let upper = min(served.count - 1, Int(bounds[1]) ?? served.count - 1)
        fields["Content-Range"] = "bytes \(lower)-\(upper)/\(served.count)"
        return (206, fields, served.subdata(in: lower..<upper + 1))
    }
}

/// A clock that moves only when told to.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date(timeIntervalSince1970: 1_700_000_000)

    func now() -> Date { lock.withLock { current } }
    func advance(by seconds: TimeInterval) { lock.withLock { current += seconds } }
}

/// A folder under the temporary directory, removed by `cleanUp()`.
struct TemporaryFolder {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-downloads-" + UUID().uuidString)

    func cleanUp() { try? FileManager.default.removeItem(at: url) }

    /// The names of the files in the manager's partial-download folder.
    var partialFiles: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: url.appendingPathComponent("Downloads").path)) ?? []
    }
}

/// Deterministic bytes of a given size.
func samplePackage(size: Int, seed: UInt8 = 7) -> Data {
    Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &* 17 &+ $0 / 251) })
}

/// Reads events until one in `state` arrives (the stream keeps everything since it was made).
func events(
    _ stream: AsyncStream<DownloadEvent>, until state: DownloadState
) async -> [DownloadEvent] {
    var seen: [DownloadEvent] = []
    for await event in stream {
        seen.append(event)
        if event.state == state { break }
    }
    return seen
}

/// Builds a zip of stored (uncompressed) entries, byte by byte.
func storedZip(_ entries: [(name: String, data: Data)]) -> Data {
    var archive = Data()
    var central = Data()
    func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * UInt32($0)) & 0xFF) } }
    for entry in entries {
        let name = Array(entry.name.utf8)
        let crc = crc32(entry.data)
        let size = le32(UInt32(entry.data.count))
        let offset = UInt32(archive.count)
        archive += le32(0x0403_4B50) + le16(20) + le16(0) + le16(0) + le16(0) + le16(0x21)
        archive += le32(crc) + size + size + le16(name.count) + le16(0) + name
        archive += entry.data
        central += le32(0x0201_4B50) + le16(0x031E) + le16(20) + le16(0) + le16(0) + le16(0) + le16(0x21)
        central += le32(crc) + size + size + le16(name.count) + le16(0) + le16(0) + le16(0) + le16(0)
        central += le32(0o100644 << 16) + le32(offset) + name
    }
    let centralOffset = UInt32(archive.count)
    archive += central
    archive += le32(0x0605_4B50) + le16(0) + le16(0) + le16(entries.count) + le16(entries.count)
    archive += le32(UInt32(central.count)) + le32(centralOffset) + le16(0)
    return archive
}

/// CRC-32 (IEEE), computed bit by bit.
func crc32(_ data: Data) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in data {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
}
