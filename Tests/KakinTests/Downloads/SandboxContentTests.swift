import AppStoreSecurity
import AppStoreTesting
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Kakin
import KakinTestSupport
import StoreSandbox
import Testing

/// Downloads from the sandbox App Store's real content route, in process and over loopback HTTP.
@Suite("Sandbox hosted content")
struct SandboxContentTests {
    static let product = "com.example.kakin.soundPack"
    static let storeKitFile = ExampleApp.storeKitFile

    let folder = TemporaryFolder()

    /// A sandbox whose tester `c` owns the sound pack (4 MiB of stand-in content).
    func sandbox(owning: Bool = true) async throws -> SandboxService {
        let catalog = try ExampleApp.catalog()
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: SandboxCertificateAuthority.generate(now: start), clock: .manual(at: start))
        _ = try await engine.createTester(name: "c@example.com", id: "c")
        if owning { _ = try await engine.purchase(.init(testerID: "c", productID: Self.product)) }
        return SandboxService(engine: engine, catalog: catalog)
    }

    @Test func pausesAndResumesAgainstTheSandboxRoute() async throws {
        defer { folder.cleanUp() }
        let service = try await sandbox()
        try await Application(router: service.router()).test(.router) { client in
            let transport = RouterTransport(client: client)
            let manager = DownloadManager(directory: folder.url, transport: transport, chunkSize: 1 << 20)
            await transport.log.onRequest { number in
                guard number == 3, let id = await manager.downloads().first?.id else { return }
                await manager.pause(id)
            }
            let request = ContentRequest.sandbox(
                URL(string: "http://sandbox.local")!, testerID: "c", productID: Self.product)
            let id = await manager.start(request).id
            let paused = try #require(await manager.wait(for: id))
            #expect(paused.state == .paused)
            #expect(paused.bytesReceived == 2 << 20)
            #expect(paused.contentLength == 4 << 20)

            await manager.resume(id)
            let done = try #require(await manager.wait(for: id))
            #expect(done.state == .finished)
            let package = try Data(contentsOf: try #require(done.contentURL).appendingPathComponent("content.bin"))
            let digest = SHA256.hash(data: package).map { String(format: "%02x", $0) }.joined()
            #expect(package.count == 4 << 20)
            #expect(done.contentVersion == "1.0", "the sandbox sends the catalog's content version")
            #expect(digest.count == 64)
            let ranges = await transport.log.ranges
            #expect(
                ranges == [
                    "bytes=0-1048575", "bytes=1048576-2097151", "bytes=2097152-3145727",
                    "bytes=2097152-3145727", "bytes=3145728-4194303",
                ])
        }
    }

    @Test func notOwnedIsNotEntitled() async throws {
        defer { folder.cleanUp() }
        let service = try await sandbox(owning: false)
        try await Application(router: service.router()).test(.router) { client in
            let manager = DownloadManager(directory: folder.url, transport: RouterTransport(client: client))
            let request = ContentRequest.sandbox(
                URL(string: "http://sandbox.local")!, testerID: "c", productID: Self.product)
            let failed = try #require(await manager.wait(for: await manager.start(request).id))
            #expect(failed.state == .failed)
            #expect(failed.error?.code == .downloadFailed)
            #expect(failed.error?.message.contains("not entitled") == true)
        }
    }

    @Test func urlSessionTransportDownloadsOverLoopback() async throws {
        defer { folder.cleanUp() }
        let service = try await sandbox()
        let app = Application(router: service.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let manager = DownloadManager(
                directory: folder.url, transport: URLSessionDownloadTransport(), chunkSize: 1 << 20)
            let request = ContentRequest.sandbox(
                URL(string: "http://127.0.0.1:\(port)")!, testerID: "c", productID: Self.product)
            let done = try #require(await manager.wait(for: await manager.start(request).id))
            #expect(done.state == .finished, "\(String(describing: done.error))")
            #expect(done.bytesReceived == 4 << 20)
        }
    }
}

/// A transport that sends requests to a Hummingbird application through its test client.
struct RouterTransport: DownloadTransport {
    let client: any TestClientProtocol
    let log = RequestLog()

    func fetch(
        url: URL, headers: [String: String], range: (offset: Int64, length: Int64?)
    ) async throws -> (status: Int, headers: [String: String], body: Data) {
        await log.record(headers["Range"])
        var fields = HTTPFields()
        for (name, value) in headers {
            if let name = HTTPFields.Element.Name(name) { fields[name] = value }
        }
        let uri = url.path + (url.query.map { "?" + $0 } ?? "")
        let response = try await client.executeRequest(uri: uri, method: .get, headers: fields, body: nil)
        var answer: [String: String] = [:]
        for field in response.headers { answer[field.name.canonicalName] = field.value }
        return (Int(response.status.code), answer, Data(buffer: response.body))
    }
}

/// The `Range` of every request, and a hook run with each request's number.
actor RequestLog {
    private(set) var ranges: [String?] = []
    private var hook: (@Sendable (Int) async -> Void)?

    func onRequest(_ hook: @escaping @Sendable (Int) async -> Void) { self.hook = hook }

    func record(_ range: String?) async {
        ranges.append(range)
        await hook?(ranges.count)
    }
}
