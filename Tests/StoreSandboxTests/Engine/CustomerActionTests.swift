import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinTestSupport
import StoreSandbox
import Testing

@Suite struct RefundOutcomeTests {
    @Test func aRefundRequestIsDeclinedOrGrantedThenReversed() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "r@example.com")
        let points = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points")).transaction)
        try await fixture.engine.requestRefund(points.id, testerID: tester.id)
        #expect(await fixture.engine.hasPendingRefundRequest(points.id))
        #expect(await fixture.engine.events().last?.notificationType == .consumptionRequest)
        await #expect(throws: SandboxError(.invalidRequest), "a second request is a duplicate") {
            try await fixture.engine.requestRefund(points.id, testerID: tester.id)
        }
        await #expect(throws: SandboxError(.unknownTransaction)) {
            try await fixture.engine.requestRefund(points.id, testerID: "someone-else")
        }
        try await fixture.engine.declineRefund(points.id)
        #expect(await fixture.engine.events().last?.notificationType == .refundDeclined)
        #expect(await !fixture.engine.hasPendingRefundRequest(points.id))
        #expect(try await fixture.engine.transaction(points.id).isRevoked == false)

        let unlock = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "removeAd")).transaction)
        await #expect(throws: SandboxError(.invalidRequest), "nothing to reverse yet") {
            try await fixture.engine.reverseRefund(unlock.id)
        }
        let refunded = try await fixture.engine.refund(unlock.id)
        #expect(refunded.revocationType == .refundFull)
        #expect(await fixture.engine.currentEntitlements(of: tester.id).isEmpty)
        await #expect(throws: SandboxError(.invalidRequest)) { try await fixture.engine.declineRefund(unlock.id) }
        let mark = try await fixture.engine.updates(of: tester.id, after: 0).lastSequence
        let reinstated = try await fixture.engine.reverseRefund(unlock.id)
        #expect(reinstated.revocationDate == nil)
        #expect(reinstated.revocationReason == nil)
        #expect(reinstated.revocationType == nil)
        #expect(await fixture.engine.currentEntitlements(of: tester.id).map(\.id) == [unlock.id])
        #expect(await fixture.engine.events().last?.notificationType == .refundReversed)
        #expect(try await fixture.engine.updates(of: tester.id, after: mark).transactions.map(\.id) == [unlock.id])
        // What the notification carries: the reinstated transaction, signed, without revocation.
        let event = try #require(await fixture.engine.events().last)
        let payload = try await fixture.engine.notificationPayload(for: event)
        let jws = try #require(payload.data?.signedTransactionInfo)
        let signed = try await fixture.engine.signer.makeVerifier().verifyTransaction(jws)
        #expect(signed.transactionID == unlock.id)
        #expect(signed.revocationDate == nil)
        #expect(try await fixture.engine.revoke(unlock.id).revocationType == .familyRevoke)
    }
}

@Suite struct PriceIncreaseTests {
    func subscriber(_ fixture: EngineFixture) async throws -> String {
        let tester = try await fixture.engine.createTester(name: "p@example.com")
        return try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "yearly")).transaction
        ).id
    }

    @Test func consentedIncreaseRenewsAtTheNewPrice() async throws {
        let fixture = try EngineFixture()
        let original = try await subscriber(fixture)
        try await fixture.engine.increasePrice(originalTransactionID: original, to: 59_990)
        var event = try #require(await fixture.engine.events().last)
        #expect(event.notificationType == .priceIncrease)
        #expect(event.subtype == .pending)
        var info = try await fixture.engine.renewalInfo(originalTransactionID: original)
        #expect(info.priceIncreaseStatus == .customerHasNotResponded)
        #expect(info.renewalPrice == 59_990)
        try await fixture.engine.consentToPriceIncrease(originalTransactionID: original)
        event = try #require(await fixture.engine.events().last)
        #expect(event.subtype == .accepted)
        info = try await fixture.engine.renewalInfo(originalTransactionID: original)
        #expect(info.priceIncreaseStatus == .customerConsentedOrWasNotified)
        await #expect(throws: SandboxError(.invalidRequest)) {
            try await fixture.engine.consentToPriceIncrease(originalTransactionID: original)
        }
        fixture.days(366 * 2)
        try await fixture.engine.processRenewals()
        let prices = try await fixture.engine.transactions(of: fixture.engine.transaction(original).testerID)
            .map(\.priceMilliunits)
        #expect(prices == [49_990, 59_990, 59_990], "the new price from the first renewal on")
        #expect(try await fixture.engine.renewalInfo(originalTransactionID: original).priceIncreaseStatus == nil)
    }

    @Test func withoutConsentTheSubscriptionExpiresAtRenewal() async throws {
        let fixture = try EngineFixture()
        let original = try await subscriber(fixture)
        try await fixture.engine.increasePrice(originalTransactionID: original, to: 59_990)
        fixture.days(366)
        let events = try await fixture.engine.processRenewals()
        #expect(events.map(\.notificationType) == [.expired])
        #expect(events.map(\.subtype) == [.priceIncrease])
        let info = try await fixture.engine.renewalInfo(originalTransactionID: original)
        #expect(info.expirationIntent == .didNotConsentToPriceIncrease)
        #expect(try await fixture.engine.status(originalTransactionID: original) == .expired)
        await #expect(throws: SandboxError(.ineligible)) {
            try await fixture.engine.increasePrice(originalTransactionID: original, to: 69_990)
        }
    }

    @Test func anIncreaseWithoutConsentIsAcceptedAtOnce() async throws {
        let fixture = try EngineFixture()
        let original = try await subscriber(fixture)
        try await fixture.engine.increasePrice(originalTransactionID: original, to: 54_990, requiresConsent: false)
        #expect(await fixture.engine.events().last?.subtype == .accepted)
        fixture.days(366)
        #expect(try await fixture.engine.processRenewals().map(\.notificationType) == [.didRenew])
        await #expect(throws: SandboxError(.invalidRequest)) {
            try await fixture.engine.increasePrice(originalTransactionID: original, to: 0)
        }
    }
}

@Suite struct ConsentAndSummaryTests {
    @Test func rescindedConsentSendsTheAppTransaction() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "child@example.com")
        let marked = try await fixture.engine.rescindConsent(of: tester.id)
        #expect(marked.consentRescindedDate == EngineFixture.start)
        let event = try #require(await fixture.engine.events().last)
        #expect(event.notificationType == .rescindConsent)
        let payload = try await fixture.engine.notificationPayload(for: event)
        #expect(payload.data == nil)
        #expect(payload.subtype == nil)
        let appData = try #require(payload.appData)
        #expect(appData.bundleID == ExampleApp.bundleID)
        #expect(appData.environment == .sandbox)
        let app = try await fixture.engine.signer.makeVerifier().verifyAppTransaction(
            try #require(appData.signedAppTransactionInfo))
        #expect(app.bundleID == ExampleApp.bundleID)
        // It signs and queues like every other notification.
        let queued = try await fixture.engine.queueNotifications()
        #expect(queued.map(\.notificationType) == [.rescindConsent])
        #expect(try await fixture.engine.restoreConsent(of: tester.id).consentRescindedDate == nil)
        await #expect(throws: SandboxError(.unknownTester)) { try await fixture.engine.rescindConsent(of: "ghost") }
    }

    @Test func aMassExtensionEndsWithASummary() async throws {
        let fixture = try EngineFixture()
        for name in ["a", "b"] {
            let tester = try await fixture.engine.createTester(name: name)
            _ = try await fixture.engine.purchase(.init(testerID: tester.id, productID: "yearly"))
        }
        let status = try await fixture.engine.massExtendRenewalDate(
            productID: "yearly", days: 10, requestIdentifier: "r1", storefronts: ["USA"])
        #expect(status.succeededCount == 2)
        let events = await fixture.engine.events()
        #expect(events.filter { $0.notificationType == .renewalExtended }.count == 2)
        let summaryEvent = try #require(events.last)
        #expect(summaryEvent.notificationType == .renewalExtension)
        #expect(summaryEvent.subtype == .summary)
        let payload = try await fixture.engine.notificationPayload(for: summaryEvent)
        #expect(payload.data == nil)
        let summary = try #require(payload.summary)
        #expect(summary.productID == "yearly")
        #expect(summary.requestIdentifier == "r1")
        #expect(summary.succeededCount == 2)
        #expect(summary.failedCount == 0)
        #expect(summary.storefrontCountryCodes == ["USA"])
        #expect(summary.appAppleID == ExampleApp.appAppleID)
        let body = try await fixture.engine.signedNotification(for: summaryEvent)
        let verified = try await fixture.engine.signer.makeVerifier().verifyNotification(try #require(body.signedPayload))
        #expect(verified.summary?.succeededCount == 2)
    }
}
