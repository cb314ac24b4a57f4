import AppStoreSecurity
import AppStoreTesting
import Foundation
@testable import KakinDashboard
import KakinServer
import KakinLedger
import KakinTestSupport
import StoreSandbox
import Testing

@testable import KakinCLI

/// The transaction manager's actions reach the sandbox engine of `kakin serve`.
@Suite struct EngineSandboxControlTests {
    static func engine() throws -> SandboxEngine {
        let catalog = try ExampleApp.catalog()
        return try ExampleSandbox.engine(
            catalog: catalog, authority: SandboxCertificateAuthority.generate(),
            clock: .manual(at: Date(timeIntervalSince1970: 1_800_000_000)))
    }

    @Test func testersTransactionsAndSubscriptionsAreManaged() async throws {
        let engine = try Self.engine()
        let control = EngineSandboxControl(engine: engine)
        _ = try await control.perform(.createTester(name: "jp@example.com", storefront: "JPN"))
        let tester = try #require(try await control.state().testers.first)
        #expect(tester.storefront == "JPN")
        _ = try await control.perform(.setStorefront(testerID: tester.id, storefront: "GBR"))
        _ = try await control.perform(.setAskToBuy(testerID: tester.id, enabled: true))
        #expect(try await engine.tester(tester.id).storefront == "GBR")
        #expect(try await engine.tester(tester.id).asksToBuy)

        guard
            case .deferred(let pending) = try await engine.purchase(
                PurchaseRequest(testerID: tester.id, productID: "com.example.kakin.premium.monthly"))
        else { Issue.record("ask to buy did not defer"); return }
        #expect(try await control.state().pending.map(\.id) == [pending.id])
        #expect(try await control.perform(.approve(pendingID: pending.id)).contains("approved"))
        let state = try await control.state()
        let subscription = try #require(state.subscriptions.first)
        #expect(state.pending.isEmpty)
        #expect(subscription.billingState == "ok")

        _ = try await control.perform(.failRenewals(originalTransactionID: subscription.originalTransactionID))
        #expect(try await control.state().subscriptions.first?.billingFails == true)
        _ = try await control.perform(.resolveBilling(originalTransactionID: subscription.originalTransactionID))
        _ = try await control.perform(.renew(originalTransactionID: subscription.originalTransactionID))
        #expect(try await control.state().transactions.count == 2)

        let newest = try #require(try await control.state().transactions.first)
        _ = try await control.perform(.refund(transactionID: newest.id, reason: 1))
        #expect(try await control.state().transactions.first?.revocationDate != nil)
        #expect(try await control.state().notifications.first?.type == "REFUND")

        _ = try await control.perform(.clearPurchaseHistory(testerID: tester.id))
        #expect(try await control.state().transactions.isEmpty)
    }

    @Test func theClockAndTheSettings() async throws {
        let engine = try Self.engine()
        let control = EngineSandboxControl(engine: engine)
        let before = try await control.state().now
        _ = try await control.perform(.advanceClock(seconds: 3600))
        #expect(try await control.state().now == before.addingTimeInterval(3600))
        #expect(try await control.state().clockRate == nil)
        _ = try await control.perform(.setClockRate(86_400))
        #expect(try await control.state().clockRate == 86_400)
        _ = try await control.perform(.setClockRate(0))

        let settings = SandboxControlState.Settings(
            askToBuy: true, gracePeriodDays: 6, failPurchasesWith: 2, notificationURL: "http://127.0.0.1:9/n")
        _ = try await control.perform(.updateSettings(settings))
        #expect(try await control.state().settings == settings)
        #expect(await engine.settings.failPurchasesWith == .paymentCancelled)
        let cleared = SandboxControlState.Settings(
            askToBuy: false, gracePeriodDays: 16, failPurchasesWith: nil, notificationURL: nil)
        _ = try await control.perform(.updateSettings(cleared))
        #expect(try await control.state().settings == cleared)
    }

    @Test func certificatesAreListedAndRevoked() async throws {
        let engine = try Self.engine()
        let control = EngineSandboxControl(engine: engine)
        let before = engine.authority
        let listed = try await control.state().certificates
        #expect(listed.map(\.kind) == ["root", "intermediate", "leaf"])
        #expect(listed.allSatisfy { $0.revocationDate == nil })
        #expect(listed[2].serialNumber == before.currentCertificates[2].serialNumber)

        let done = try await control.perform(.revokeCertificate(kind: "leaf"))
        #expect(done.contains("revoked"), "\(done)")
        #expect(engine.authority.leaf != before.leaf && engine.authority.root == before.root)
        let after = try await control.state().certificates
        #expect(after.map(\.kind) == ["root", "intermediate", "leaf", "leaf"])
        #expect(after[3].serialNumber == listed[2].serialNumber && after[3].revocationDate != nil)
        await #expect(throws: (any Error).self) { try await control.perform(.revokeCertificate(kind: "root")) }
    }

    @Test func aRefusalSaysWhy() async throws {
        let control = EngineSandboxControl(engine: try Self.engine())
        await #expect {
            _ = try await control.perform(.refund(transactionID: "42", reason: 0))
        } throws: { error in
            "\(error)".contains("unknownTransaction")
        }
    }
}
