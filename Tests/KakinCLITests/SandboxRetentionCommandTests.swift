import AppStoreModels
import AppStoreTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import Testing

@testable import KakinCLI
@testable import StoreSandbox

@Suite struct SandboxRetentionCommandTests {
    static let message = "6f1c2a9e-0b7d-4c4e-9a55-2f3e1d0c9b8a"

    @Test func theCommandsParse() throws {
        let open = try #require(
            try KakinCommand.parseAsRoot(["sandbox", "cancel-page", "42", "--locale", "ja-JP"])
                as? SandboxCancelPageCommand)
        #expect(open.originalTransactionID == "42")
        #expect(open.locale == "ja-JP")
        #expect(try KakinCommand.parseAsRoot(["sandbox", "retention-requests"]) is SandboxRetentionRequestsCommand)
    }

    @Test func openingTheCancelPageSendsTheRequestAndPrintsWhatTheServerAnswered() async throws {
        let catalog = try ExampleApp.catalog()
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: SandboxCertificateAuthority.generate(),
            clock: .manual(at: Date(timeIntervalSince1970: 1_800_000_000)))
        let retention = SandboxRetention(engine: engine, timing: .stepping(.milliseconds(3)))
        let service = SandboxService(engine: engine, catalog: catalog, retention: retention)
        let app = engine.signer.bundleID
        try await retention.uploadMessage(
            Self.message, .init(header: "Stay", body: "Every feature stays."), bundleID: app)
        try await RetentionTesting.withEndpoint(answer: { _ in (200, RetentionTesting.answer(Self.message)) }) {
            endpoint in
            try await retention.configureRealtimeURL(.init(realtimeURL: endpoint.absoluteString), bundleID: app)
            try await Application(router: service.router()).test(.live) { client in
                let url = "http://127.0.0.1:\(try #require(client.port))"
                let tester = try await engine.createTester(name: "cli@example.com")
                guard
                    case .purchased(let monthly) = try await engine.purchase(
                        PurchaseRequest(testerID: tester.id, productID: "com.example.kakin.premium.monthly"))
                else { throw SandboxError(.invalidRequest, "not purchased") }

                let opened = try await kakin(
                    "sandbox", "cancel-page", monthly.originalID, "--locale", "en-GB", "--url", url)
                #expect(opened.exitCode == 0, "\(opened.standardError)")
                let record = try #require(
                    try JSONSerialization.jsonObject(with: Data(opened.standardOutput.utf8)) as? [String: Any])
                #expect(record["answeredInTime"] as? Bool == true)
                #expect(record["shownMessageIdentifier"] as? String == Self.message)
                #expect(record["userLocale"] as? String == "en-GB")
                #expect(record["elapsedMilliseconds"] as? Int == 3)
                let identifier = try #require(record["requestIdentifier"] as? String)

                let listed = try await kakin("sandbox", "retention-requests", "--url", url)
                #expect(listed.exitCode == 0, "\(listed.standardError)")
                #expect(listed.standardOutput.contains(identifier))

                let unknown = try await kakin("sandbox", "cancel-page", "999999", "--url", url)
                #expect(unknown.exitCode == 1)
                #expect(unknown.standardError.hasPrefix("error: unknownTransaction"))
            }
        }
    }
}
