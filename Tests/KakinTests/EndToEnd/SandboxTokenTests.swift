import AppStoreSecurity
import AppStoreTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import StoreSandbox
import Testing

@testable import Kakin

/// `SandboxBackend(token:)` against a sandbox that asks other hosts for its token (the peer is
/// played as another host over a socket on 127.0.0.1).
@Suite struct SandboxTokenTests {
    static let token = "sandbox-token-0123456789"

    @Test func theBackendSendsTheSandboxToken() async throws {
        let catalog = try ExampleApp.catalog()
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: SandboxCertificateAuthority.generate(now: start), clock: .manual(at: start))
        _ = try await engine.createTester(name: "jp@example.com", storefront: "JPN", id: "jp")
        let service = SandboxService(engine: engine, catalog: catalog)
        let access = SandboxAccessPolicy(.loopbackOrToken(Self.token), isLocal: { _ in false })
        let app = Application(
            router: service.router(access: access), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let base = URL(string: "http://127.0.0.1:\(try #require(client.port))")!
            let withToken = SandboxBackend(baseURL: base, testerID: "jp", pollSeconds: 1, token: Self.token)
            #expect(try await withToken.canMakePayments())
            let result = try await withToken.purchase("com.example.kakin.removeAd", quantity: 1, appAccountToken: nil)
            guard case .purchased = result else {
                Issue.record("not purchased: \(result)")
                return
            }

            let withoutToken = SandboxBackend(baseURL: base, testerID: "jp", pollSeconds: 1)
            let refused = await #expect(throws: KakinError.self) { try await withoutToken.canMakePayments() }
            #expect(refused?.message.contains("401") == true, "\(String(describing: refused))")
            let wrong = SandboxBackend(baseURL: base, testerID: "jp", pollSeconds: 1, token: "wrong-token-0123456789")
            await #expect(throws: KakinError.self) { try await wrong.unfinishedTransactions() }
        }
        #expect(await engine.transactions(of: "jp").count == 1)
    }
}
