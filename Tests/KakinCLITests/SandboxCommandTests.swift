import AppStoreSecurity
import AppStoreTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import StoreSandbox
import Testing

@testable import KakinCLI

@Suite struct SandboxCommandTests {
    static let catalog = ExampleApp.storeKitFile

    @Test func optionsAreValidated() {
        #expect(throws: (any Error).self) {
            try KakinCommand.parseAsRoot(["sandbox", "--catalog", "/nonexistent.storekit"])
        }
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["sandbox", "--port", "70000"]) }
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["sandbox", "refund", "1", "--reason", "7"]) }
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["sandbox", "clock", "advance", "-5"]) }
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["sandbox", "renew", "1", "--url", "ftp:/x"]) }
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["sandbox", "auto-renew", "1", "maybe"]) }
    }

    @Test func theBareCommandStillRunsTheSandbox() throws {
        let bare = try KakinCommand.parseAsRoot(["sandbox", "--catalog", Self.catalog.path, "--port", "0"])
        let run = try #require(bare as? SandboxRunCommand)
        #expect(run.port == 0)
        #expect(try KakinCommand.parseAsRoot(["sandbox", "run", "--port", "0", "--catalog", Self.catalog.path]) is SandboxRunCommand)
        let refund = try #require(try KakinCommand.parseAsRoot(["sandbox", "refund", "42"]) as? SandboxRefundCommand)
        #expect(refund.connection.url == "http://127.0.0.1:8081")
    }

    /// A sandbox on a free port, with one tester, running while `body` runs.
    func withSandbox(_ body: @Sendable (SandboxEngine, String) async throws -> Void) async throws {
        let catalog = try ExampleApp.catalog()
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: SandboxCertificateAuthority.generate(),
            clock: .manual(at: Date(timeIntervalSince1970: 1_800_000_000)))
        let service = SandboxService(engine: engine, catalog: catalog, configuration: .init())
        try await Application(router: service.router()).test(.live) { client in
            let port = try #require(client.port)
            try await body(engine, "http://127.0.0.1:\(port)")
        }
    }

    func purchased(_ outcome: PurchaseOutcome) throws -> SandboxTransaction {
        guard case .purchased(let transaction) = outcome else { throw SandboxError(.invalidRequest, "not purchased") }
        return transaction
    }

    @Test func refundAndRenewAgainstARunningSandbox() async throws {
        try await withSandbox { engine, url in
            let tester = try await engine.createTester(name: "cli@example.com")
            let points = try purchased(
                try await engine.purchase(PurchaseRequest(testerID: tester.id, productID: "com.example.kakin.removeAd")))
            let refunded = try await kakin("sandbox", "refund", points.id, "--reason", "1", "--url", url)
            #expect(refunded.exitCode == 0, "\(refunded.standardError)")
            #expect(refunded.standardOutput.contains("\"refunded\""))
            #expect(try await engine.transaction(points.id).revocationDate != nil)

            let again = try await kakin("sandbox", "refund", "no-such-transaction", "--url", url)
            #expect(again.exitCode == 1)
            #expect(again.standardError.hasPrefix("error: unknownTransaction"))
            #expect(!again.standardError.contains("\n"))

            let monthly = try purchased(
                try await engine.purchase(
                    PurchaseRequest(testerID: tester.id, productID: "com.example.kakin.premium.monthly")))
            let renewed = try await kakin("sandbox", "renew", monthly.originalID, "--url", url)
            #expect(renewed.exitCode == 0, "\(renewed.standardError)")
            #expect(renewed.standardOutput.contains("DID_RENEW"))
            #expect(await engine.transactions(of: tester.id).count == 3)

            let off = try await kakin("sandbox", "auto-renew", monthly.originalID, "off", "--url", url)
            #expect(off.exitCode == 0, "\(off.standardError)")
            #expect(try await engine.renewalInfo(originalTransactionID: monthly.originalID).autoRenewStatus == .off)
            #expect(await engine.events().last?.subtype == .autoRenewDisabled)
            let on = try await kakin("sandbox", "auto-renew", monthly.originalID, "on", "--url", url)
            #expect(on.exitCode == 0, "\(on.standardError)")
            #expect(try await engine.renewalInfo(originalTransactionID: monthly.originalID).autoRenewStatus == .on)
        }
    }

    @Test func askToBuyAndTheClockAgainstARunningSandbox() async throws {
        try await withSandbox { engine, url in
            var tester = try await engine.createTester(name: "kid@example.com")
            tester.asksToBuy = true
            try await engine.updateTester(tester)
            guard
                case .deferred(let first) = try await engine.purchase(
                    PurchaseRequest(testerID: tester.id, productID: "com.example.kakin.removeAd")),
                case .deferred(let second) = try await engine.purchase(
                    PurchaseRequest(testerID: tester.id, productID: "com.example.kakin.increasePoints"))
            else { Issue.record("ask to buy did not defer"); return }
            let approved = try await kakin("sandbox", "approve", first.id, "--url", url)
            #expect(approved.standardOutput.contains("\"purchased\""))
            let declined = try await kakin("sandbox", "decline", second.id, "--url", url)
            #expect(declined.standardOutput.contains("\"failed\""))
            #expect(try await kakin("sandbox", "approve", second.id, "--url", url).exitCode == 1)

            let before = engine.clock.now()
            let advanced = try await kakin("sandbox", "clock", "advance", "86400", "--url", url)
            #expect(advanced.exitCode == 0, "\(advanced.standardError)")
            #expect(engine.clock.now().timeIntervalSince(before) == 86_400)
            #expect(try await kakin("sandbox", "clock", "rate", "0", "--url", url).exitCode == 0)

            let settings = try await kakin("sandbox", "settings", "--grace-period-days", "3", "--url", url)
            #expect(settings.exitCode == 0, "\(settings.standardError)")
            #expect(await engine.settings.gracePeriodDays == 3)
            #expect(try await kakin("sandbox", "clear", tester.id, "--url", url).standardOutput.contains("cleared"))
            #expect(await engine.transactions(of: tester.id).isEmpty)
        }
    }

    @Test func anUnreachableSandboxIsOneLine() async throws {
        let port = try freePort()
        let output = try await kakin("sandbox", "renew", "1", "--url", "http://127.0.0.1:\(port)")
        #expect(output.exitCode == 1)
        #expect(output.standardError.hasPrefix("error: the sandbox at http://127.0.0.1:\(port) cannot be reached"))
        #expect(!output.standardError.contains("\n"))
    }
}
