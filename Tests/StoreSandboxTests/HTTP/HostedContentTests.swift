import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import StoreSandbox
import Testing

@Suite struct HostedContentTests {
    @Test func downloadsPauseAndResumeWithRange() async throws {
        let catalog = try ExampleApp.catalog()
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: EngineFixture.authority, clock: .manual(at: EngineFixture.start))
        let service = SandboxService(engine: engine, catalog: catalog)
        _ = try await engine.createTester(name: "c@example.com", id: "c")
        let uri = "/v1/device/testers/c/content/com.example.kakin.soundPack"
        try await Application(router: service.router()).test(.router) { client in
            let notOwned = try await client.execute(uri: uri, method: .get)
            #expect(notOwned.status == .forbidden)

            _ = try await engine.purchase(.init(testerID: "c", productID: "com.example.kakin.soundPack"))
            let whole = try await client.execute(uri: uri, method: .get)
            #expect(whole.status == .ok)
            let package = Data(buffer: whole.body)
            #expect(package.count == 4 * 1024 * 1024)
            let etag = try #require(whole.headers[.eTag])
            #expect(etag == "\"" + SHA256.hash(data: package).map { String(format: "%02x", $0) }.joined() + "\"")
            #expect(whole.headers[.acceptRanges] == "bytes")

            // Pause after the first megabyte, resume from there.
            let first = try await client.execute(uri: uri, method: .get, headers: [.range: "bytes=0-1048575"])
            #expect(first.status == .partialContent)
            #expect(first.headers[.contentRange] == "bytes 0-1048575/4194304")
            let rest = try await client.execute(
                uri: uri, method: .get, headers: [.range: "bytes=1048576-", .ifRange: etag])
            #expect(rest.status == .partialContent)
            #expect(Data(buffer: first.body) + Data(buffer: rest.body) == package)

            let tail = try await client.execute(uri: uri, method: .get, headers: [.range: "bytes=-10"])
            #expect(Data(buffer: tail.body) == package.suffix(10))
            let stale = try await client.execute(
                uri: uri, method: .get, headers: [.range: "bytes=5-", .ifRange: "\"old\""])
            #expect(stale.status == .ok)
            let beyond = try await client.execute(uri: uri, method: .get, headers: [.range: "bytes=99999999-"])
            #expect(beyond.status == .rangeNotSatisfiable)
            #expect(beyond.headers[.contentRange] == "bytes */4194304")

            _ = try await engine.purchase(.init(testerID: "c", productID: "com.example.kakin.unlock"))
            let none = try await client.execute(
                uri: "/v1/device/testers/c/content/com.example.kakin.unlock", method: .get)
            #expect(none.status == .notFound)
        }
    }
}
