import AppStoreModels
import Foundation
import StoreSandbox
import Testing

@Suite struct SubscriptionTests {
    func subscribe(
        _ fixture: EngineFixture, _ product: String = "monthly", offer: String? = nil
    ) async throws
        -> (SandboxTester, SandboxTransaction)
    {
        let tester = try await fixture.engine.createTester(name: "s@example.com")
        let outcome = try await fixture.engine.purchase(
            .init(
                testerID: tester.id, productID: product, promotionalOfferID: offer,
                promotionalOfferSignature: try offer.map { try fixture.signedOffer($0, product: product) }),
            offerKeys: EngineFixture.offerKeys)
        return (tester, try #require(outcome.transaction))
    }

    @Test func renewsOnTheSandboxClockAfterTheFreeTrial() async throws {
        let fixture = try EngineFixture()
        let (tester, first) = try await subscribe(fixture)
        #expect(first.expiresDate == EngineFixture.start.addingTimeInterval(7 * 86_400))
        #expect(first.priceMilliunits == 0)
        fixture.days(8)
        let events = try await fixture.engine.processRenewals()
        #expect(events.map(\.notificationType) == [.didRenew])
        let renewal = try #require(await fixture.engine.transactions(of: tester.id).last)
        #expect(renewal.originalID == first.id)
        #expect(renewal.reason == .renewal)
        #expect(renewal.offerType == nil)
        #expect(renewal.priceMilliunits == 4_990)
        #expect(renewal.purchaseDate == first.expiresDate)
        #expect(renewal.webOrderLineItemID != first.webOrderLineItemID)
        // Two months later: two more renewals, one per period, nothing skipped.
        fixture.days(60)
        #expect(try await fixture.engine.processRenewals().count == 2)
        #expect(await fixture.engine.currentEntitlements(of: tester.id).map(\.productID) == ["monthly"])
        #expect(try await fixture.engine.status(originalTransactionID: first.id) == .active)
    }

    @Test func voluntaryCancellationExpiresAtTheEndOfThePeriod() async throws {
        let fixture = try EngineFixture()
        let (tester, first) = try await subscribe(fixture)
        try await fixture.engine.setAutoRenew(false, originalTransactionID: first.id)
        fixture.days(6)
        #expect(try await fixture.engine.processRenewals().isEmpty)
        #expect(await fixture.engine.currentEntitlements(of: tester.id).count == 1)
        fixture.days(2)
        let events = try await fixture.engine.processRenewals()
        #expect(events.map(\.subtype) == [.voluntary])
        #expect(await fixture.engine.currentEntitlements(of: tester.id).isEmpty)
        let info = try await fixture.engine.renewalInfo(originalTransactionID: first.id)
        #expect(info.expirationIntent == .customerCancelled)
        #expect(info.autoRenewStatus == .off)
        #expect(try await fixture.engine.status(originalTransactionID: first.id) == .expired)
        // Resubscribing keeps the original transaction ID and gives no second introductory offer.
        let again = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthly")).transaction)
        #expect(again.originalID == first.id)
        #expect(again.offerType == nil)
        #expect(await fixture.engine.events().last?.subtype == .resubscribe)
    }

    @Test func billingFailureGoesThroughGracePeriodAndBillingRetry() async throws {
        let fixture = try EngineFixture()
        let (tester, first) = try await subscribe(fixture, "yearly")
        try await fixture.engine.failRenewals(originalTransactionID: first.id)
        fixture.days(366)
        #expect(try await fixture.engine.processRenewals().map(\.subtype) == [.gracePeriod])
        #expect(try await fixture.engine.status(originalTransactionID: first.id) == .billingGracePeriod)
        #expect(await fixture.engine.currentEntitlements(of: tester.id).count == 1, "service continues in grace")
        fixture.days(20)
        #expect(try await fixture.engine.processRenewals().map(\.notificationType) == [.gracePeriodExpired])
        #expect(try await fixture.engine.status(originalTransactionID: first.id) == .billingRetry)
        #expect(await fixture.engine.currentEntitlements(of: tester.id).isEmpty)
        #expect(try await fixture.engine.renewalInfo(originalTransactionID: first.id).isInBillingRetryPeriod == true)
        try await fixture.engine.resolveBillingIssue(originalTransactionID: first.id)
        #expect(await fixture.engine.events().last?.subtype == .billingRecovery)
        #expect(try await fixture.engine.status(originalTransactionID: first.id) == .active)
    }

    @Test func billingRetryEndsInExpiry() async throws {
        let fixture = try EngineFixture()
        let (_, first) = try await subscribe(fixture, "yearly")
        try await fixture.engine.updateSettings(SandboxSettings(gracePeriodDays: 0))
        try await fixture.engine.failRenewals(originalTransactionID: first.id)
        fixture.days(366)
        #expect(try await fixture.engine.processRenewals().map(\.notificationType) == [.didFailToRenew])
        fixture.days(61)
        #expect(try await fixture.engine.processRenewals().map(\.subtype) == [.billingRetry])
        #expect(try await fixture.engine.renewalInfo(originalTransactionID: first.id).expirationIntent == .billingError)
    }

    @Test func upgradeIsImmediateAndDowngradeWaitsForTheRenewal() async throws {
        let fixture = try EngineFixture()
        let (tester, monthly) = try await subscribe(fixture)
        fixture.days(1)
        let yearly = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "yearly")).transaction)
        #expect(yearly.originalID == monthly.id)
        #expect(try await fixture.engine.transaction(monthly.id).isUpgraded)
        #expect(await fixture.engine.currentEntitlements(of: tester.id).map(\.productID) == ["yearly"])
        #expect(await fixture.engine.events().last?.subtype == .upgrade)

        let kept = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthly")).transaction)
        #expect(kept.id == yearly.id, "a downgrade changes nothing until the renewal")
        #expect(await fixture.engine.events().last?.subtype == .downgrade)
        #expect(try await fixture.engine.renewalInfo(originalTransactionID: monthly.id).autoRenewProductID == "monthly")
        fixture.days(366)
        try await fixture.engine.processRenewals()
        let renewed = try #require(
            await fixture.engine.transactions(of: tester.id).filter { $0.reason == .renewal }.first)
        #expect(renewed.productID == "monthly")
        #expect(renewed.priceMilliunits == 4_990)
    }

    @Test func promotionalOfferBillsItsPeriodsThenFullPrice() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "p@example.com")
        let first = try #require(
            try await fixture.engine.purchase(
                .init(
                    testerID: tester.id, productID: "monthly", promotionalOfferID: "comeback",
                    promotionalOfferSignature: try fixture.signedOffer("comeback")),
                offerKeys: EngineFixture.offerKeys
            )
            .transaction)
        #expect(first.offerType == .promotional)
        #expect(first.offerIdentifier == "comeback")
        #expect(first.priceMilliunits == 1_990)
        #expect(await fixture.engine.events().last?.notificationType == .offerRedeemed)
        fixture.days(31)
        try await fixture.engine.processRenewals()
        fixture.days(31)
        try await fixture.engine.processRenewals()
        let prices = await fixture.engine.transactions(of: tester.id).map(\.priceMilliunits)
        #expect(prices == [1_990, 1_990, 4_990])
    }

    @Test func aClockYearsAheadRenewsPeriodByPeriod() async throws {
        let fixture = try EngineFixture()
        let (tester, _) = try await subscribe(fixture)
        fixture.days(365 * 3)
        try await fixture.engine.processRenewals()
        let count = await fixture.engine.transactions(of: tester.id).count
        #expect(count >= 36 && count <= 38)
    }
}

extension SubscriptionTests {
    @Test func forcedRenewalHappensNow() async throws {
        let fixture = try EngineFixture()
        let (tester, first) = try await subscribe(fixture, "yearly")
        fixture.days(3)
        let events = try await fixture.engine.forceRenewal(originalTransactionID: first.id)
        #expect(events.map(\.notificationType) == [.didRenew])
        let renewal = try #require(await fixture.engine.transactions(of: tester.id).last)
        #expect(renewal.purchaseDate == EngineFixture.start.addingTimeInterval(3 * 86_400))
        try await fixture.engine.resetAll()
        #expect(await fixture.engine.testers().isEmpty)
        let again = try await fixture.engine.createTester(name: "again@example.com")
        let next = try #require(
            try await fixture.engine.purchase(.init(testerID: again.id, productID: "points")).transaction)
        #expect(UInt64(next.id)! > UInt64(renewal.id)!, "IDs are never reused")
    }
}
