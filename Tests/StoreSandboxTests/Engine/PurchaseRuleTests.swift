import AppStoreModels
import AppStoreSecurity
import Foundation
import StoreSandbox
import Testing

@Suite struct PurchaseRuleTests {
    @Test func nonConsumableIsNeverChargedTwice() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "a@example.com")
        let first = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "removeAd")).transaction)
        let second = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "removeAd")).transaction)
        #expect(first == second)
        #expect(await fixture.engine.transactions(of: tester.id).count == 1)
        #expect(first.storefrontID == "143441")
        #expect(await fixture.engine.events().map(\.notificationType) == [.oneTimeCharge])
    }

    @Test func consumableStaysUnfinishedUntilFinishedThenLeavesTheReceipt() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "a@example.com")
        let token = UUID()
        let bought = try #require(
            try await fixture.engine.purchase(
                .init(testerID: tester.id, productID: "points", quantity: 3, appAccountToken: token)
            )
            .transaction)
        #expect(bought.quantity == 3)
        #expect(bought.appAccountToken == token.uuidString.lowercased())
        #expect(await fixture.engine.unfinishedTransactions(of: tester.id).map(\.id) == [bought.id])
        try await fixture.engine.finish(bought.id, testerID: tester.id)
        #expect(await fixture.engine.unfinishedTransactions(of: tester.id).isEmpty)
        #expect(await fixture.engine.restorableTransactions(of: tester.id).isEmpty, "consumables are not restored")
        let again = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points")).transaction)
        #expect(again.id != bought.id)
        await #expect(throws: SandboxError(.unknownTransaction, "")) {
            try await fixture.engine.finish("nope", testerID: tester.id)
        }
    }

    @Test func failuresCarryStoreKitCodes() async throws {
        let fixture = try EngineFixture()
        var tester = try await fixture.engine.createTester(name: "child@example.com")
        #expect(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "hidden")).failure
                == .storeProductNotAvailable)
        #expect(
            try await fixture.engine.purchase(
                .init(testerID: tester.id, productID: "yearly", promotionalOfferID: "nope")
            ).failure
                == .invalidOfferIdentifier)
        try await fixture.engine.updateSettings(SandboxSettings(failPurchasesWith: .paymentCancelled))
        #expect(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points")).failure
                == .paymentCancelled)
        try await fixture.engine.updateSettings(SandboxSettings())
        tester.canMakePayments = false
        try await fixture.engine.updateTester(tester)
        #expect(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points")).failure
                == .paymentNotAllowed)
        #expect(await fixture.engine.transactions(of: tester.id).isEmpty)
        await #expect(throws: SandboxError(.unknownTester, "")) {
            try await fixture.engine.purchase(.init(testerID: "ghost", productID: "points"))
        }
    }

    @Test func askToBuyDefersUntilApprovedOrDeclined() async throws {
        let fixture = try EngineFixture()
        var tester = try await fixture.engine.createTester(name: "kid@example.com")
        tester.asksToBuy = true
        try await fixture.engine.updateTester(tester)
        let pending = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "removeAd")).pending)
        #expect(pending.reason == .askToBuy)
        #expect(await fixture.engine.transactions(of: tester.id).isEmpty)
        let approved = try #require(try await fixture.engine.approve(pending.id).transaction)
        #expect(approved.productID == "removeAd")
        let second = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points")).pending)
        #expect(try await fixture.engine.decline(second.id).failure == .paymentCancelled)
        await #expect(throws: SandboxError(.unknownPendingPurchase, "")) { try await fixture.engine.approve(second.id) }
        // StoreKit 1's simulatesAskToBuyInSandbox defers one payment for any tester.
        let other = try await fixture.engine.createTester(name: "b@example.com")
        #expect(
            try await fixture.engine.purchase(.init(testerID: other.id, productID: "pass", simulatesAskToBuy: true))
                .pending != nil)
    }

    @Test func interruptedPurchaseCompletesLater() async throws {
        let fixture = try EngineFixture()
        var tester = try await fixture.engine.createTester(name: "a@example.com")
        tester.interruptsPurchases = true
        try await fixture.engine.updateTester(tester)
        let pending = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "removeAd")).pending)
        #expect(pending.reason == .interrupted)
        #expect(try await fixture.engine.approve(pending.id).transaction != nil)
    }

    @Test func refundRevokesAndRecordsTheNotification() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "a@example.com")
        let bought = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "removeAd")).transaction)
        #expect(await fixture.engine.currentEntitlements(of: tester.id).map(\.id) == [bought.id])
        fixture.days(3)
        let refunded = try await fixture.engine.refund(bought.id, reason: .appIssue)
        #expect(refunded.revocationDate == EngineFixture.start.addingTimeInterval(3 * 86_400))
        #expect(refunded.revocationReason == .appIssue)
        #expect(await fixture.engine.currentEntitlements(of: tester.id).isEmpty)
        #expect(await fixture.engine.events().last?.notificationType == .refund)
        // After a refund the product can be bought again.
        let again = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "removeAd")).transaction)
        #expect(again.id != bought.id)
    }

    @Test func clearingPurchaseHistoryLetsTheSameTesterStartOver() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "a@example.com")
        let first = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthly")).transaction)
        #expect(first.offerType == .introductory)
        try await fixture.engine.clearPurchaseHistory(of: tester.id)
        #expect(await fixture.engine.transactions(of: tester.id).isEmpty)
        let again = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthly")).transaction)
        #expect(again.offerType == .introductory, "the introductory offer is available again")
        #expect(try await fixture.engine.tester(tester.id).name == "a@example.com")
    }

    @Test(arguments: ["state.db", "state.json"]) func stateSurvivesARestart(file: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kakin-engine-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        func store() throws -> any SandboxStateStore {
            file == "state.db" ? try SQLiteStateStore(directory: directory) : FileStateStore(directory: directory)
        }
        let first = try EngineFixture(store: store())
        let tester = try await first.engine.createTester(name: "a@example.com", storefront: "JPN")
        let bought = try #require(
            try await first.engine.purchase(.init(testerID: tester.id, productID: "removeAd")).transaction)
        let second = try EngineFixture(store: store())
        #expect(try await second.engine.transaction(bought.id) == bought)
        #expect(try await second.engine.tester(tester.id).storefront == "JPN")
        let next = try #require(
            try await second.engine.purchase(.init(testerID: tester.id, productID: "points")).transaction)
        #expect(UInt64(next.id)! > UInt64(bought.id)!)
    }

    @Test func everythingTheEngineHandsOutVerifies() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "a@example.com")
        let bought = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthly")).transaction)
        let signer = fixture.engine.signer
        let verifier = try signer.makeVerifier()
        let payload = try await verifier.verifyTransaction(try signer.signTransaction(bought, at: fixture.clock.now()))
        #expect(payload.originalTransactionID == bought.originalID)
        #expect(payload.offerType == .introductory)
        #expect(payload.offerDiscountType == .freeTrial)
        let renewal = try await fixture.engine.renewalInfo(originalTransactionID: bought.originalID)
        let verifiedRenewal = try await verifier.verifyRenewalInfo(
            try signer.signRenewalInfo(renewal, at: fixture.clock.now()))
        #expect(verifiedRenewal.autoRenewStatus == .on)
        #expect(verifiedRenewal.autoRenewProductID == "monthly")
    }
}
