import AppStoreModels
import AppStoreSecurity
import Foundation
import StoreSandbox
import Testing

@Suite struct PartialRefundTests {
    @Test func aProratedRefundIsSignedWithItsTypeAndPercentage() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "partial@example.com")
        let points = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points")).transaction)
        let refunded = try await fixture.engine.refund(points.id, reason: .appIssue, percentage: 50_000)
        #expect(refunded.revocationType == .refundProrated)
        #expect(refunded.revocationPercentage == 50_000)
        #expect(refunded.revocationDate == EngineFixture.start)
        let event = try #require(await fixture.engine.events().last)
        #expect(event.notificationType == .refund)
        #expect(event.transactionID == points.id)

        // What the notification carries, verified as a server verifies it.
        let payload = try await fixture.engine.notificationPayload(for: event)
        let jws = try #require(payload.data?.signedTransactionInfo)
        let signed = try await fixture.engine.signer.makeVerifier().verifyTransaction(jws)
        #expect(signed.revocationType == .refundProrated)
        #expect(signed.revocationPercentage == 50_000)
        #expect(signed.revocationReason == .appIssue)
        #expect(signed.revocationDate == EngineFixture.start)
    }

    @Test func theSameShareAgainChangesNothingAndALargerOneRefundsTheRest() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "again@example.com")
        let unlock = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "removeAd")).transaction)
        try await fixture.engine.refund(unlock.id, percentage: 40_000)
        #expect(await fixture.engine.currentEntitlements(of: tester.id).isEmpty, "a prorated refund ends access")
        let count = await fixture.engine.events().count
        try await fixture.engine.refund(unlock.id, percentage: 40_000)
        try await fixture.engine.refund(unlock.id, percentage: 10_000)
        try await fixture.engine.revoke(unlock.id)
        #expect(await fixture.engine.events().count == count, "nothing changed, nothing was sent")

        fixture.days(1)
        let full = try await fixture.engine.refund(unlock.id)
        #expect(full.revocationType == .refundFull)
        #expect(full.revocationPercentage == 100_000)
        #expect(full.revocationDate == EngineFixture.start.addingTimeInterval(86_400))
        #expect(await fixture.engine.events().count == count + 1)
        #expect(await fixture.engine.events().last?.notificationType == .refund)
        try await fixture.engine.refund(unlock.id, percentage: 100_000)
        #expect(await fixture.engine.events().count == count + 1)

        let reinstated = try await fixture.engine.reverseRefund(unlock.id)
        #expect(reinstated.revocationPercentage == nil, "Apple drops the percentage of a reversed refund")
        #expect(reinstated.revocationType == nil)
    }

    @Test func aFullRefundCarriesTheWholePercentageAndFamilyRevocationNone() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "full@example.com")
        let first = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points")).transaction)
        let second = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "pass")).transaction)
        let full = try await fixture.engine.refund(first.id)
        #expect(full.revocationType == .refundFull)
        #expect(full.revocationPercentage == 100_000)
        let revoked = try await fixture.engine.revoke(second.id)
        #expect(revoked.revocationType == .familyRevoke)
        #expect(revoked.revocationPercentage == nil)
    }

    @Test(arguments: [0, -5, 100_001, Int.max])
    func aPercentageOutsideTheRangeIsRefused(percentage: Int) async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "bad@example.com")
        let points = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points")).transaction)
        await #expect(throws: SandboxError(.invalidRefundPercentage)) {
            try await fixture.engine.refund(points.id, percentage: percentage)
        }
        #expect(try await fixture.engine.transaction(points.id).isRevoked == false)
    }
}

@Suite struct ProratedRefundDecisionTests {
    @Test func aGrantProratedPreferenceRefundsTheShareNotConsumed() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "decide@example.com")
        let points = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points")).transaction)
        try await fixture.engine.requestRefund(points.id, testerID: tester.id)
        var report = ConsumptionRequest()
        report.customerConsented = true
        report.consumptionPercentage = 30_000
        report.refundPreference = .grantProrated
        try await fixture.engine.reportConsumption(transactionID: points.id, report)
        #expect(try await fixture.engine.decideRefund(points.id))
        let refunded = try await fixture.engine.transaction(points.id)
        #expect(refunded.revocationType == .refundProrated)
        #expect(refunded.revocationPercentage == 70_000)
    }

    @Test func aGrantFullPreferenceRefundsInFull() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "decide-full@example.com")
        let points = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points")).transaction)
        try await fixture.engine.requestRefund(points.id, testerID: tester.id)
        var report = ConsumptionRequest()
        report.consumptionPercentage = 30_000
        report.refundPreference = .grantFull
        try await fixture.engine.reportConsumption(transactionID: points.id, report)
        #expect(try await fixture.engine.decideRefund(points.id))
        let refunded = try await fixture.engine.transaction(points.id)
        #expect(refunded.revocationType == .refundFull)
        #expect(refunded.revocationPercentage == 100_000)
    }
}
