import AppStoreModels
import Foundation
import StoreSandbox
import Testing

@Suite struct WinBackOfferTests {
    /// A tester whose monthly subscription (free trial first) is on its way; returns its original ID.
    func subscribed(_ fixture: EngineFixture) async throws -> (SandboxTester, String) {
        let tester = try await fixture.engine.createTester(name: "w@example.com")
        let first = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthly")).transaction)
        return (tester, first.id)
    }

    func winBack(_ fixture: EngineFixture, _ tester: SandboxTester) async throws -> PurchaseOutcome {
        try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthly", winBackOfferID: "winBack"))
    }

    @Test func onlyAnExpiredSubscriberIsWonBackOnce() async throws {
        let fixture = try EngineFixture()
        let stranger = try await fixture.engine.createTester(name: "new@example.com")
        #expect(try await winBack(fixture, stranger).failure == .ineligibleForOffer, "never subscribed")
        let (tester, original) = try await subscribed(fixture)
        #expect(try await winBack(fixture, tester).failure == .ineligibleForOffer, "still active")
        #expect(try await fixture.engine.renewalInfo(originalTransactionID: original).eligibleWinBackOfferIDs == nil)
        try await fixture.engine.setAutoRenew(false, originalTransactionID: original)
        fixture.days(8)
        try await fixture.engine.processRenewals()
        #expect(try await fixture.engine.status(originalTransactionID: original) == .expired)
        #expect(
            try await fixture.engine.renewalInfo(originalTransactionID: original).eligibleWinBackOfferIDs
                == ["winBack"])
        #expect(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthly", winBackOfferID: "nope"))
                .failure == .invalidOfferIdentifier)

        let won = try #require(try await winBack(fixture, tester).transaction)
        #expect(won.offerType == .winBack)
        #expect(won.offerIdentifier == "winBack")
        #expect(won.offerDiscountType == .payUpFront)
        #expect(won.priceMilliunits == 2_990)
        #expect(won.originalID == original)
        #expect(won.expiresDate == EngineFixture.start.addingTimeInterval(8 * 86_400).advancedByMonths(2))
        let event = try #require(await fixture.engine.events().last)
        #expect(event.notificationType == .offerRedeemed)
        #expect(event.subtype == .resubscribe)
        let payload = won.payload(bundleID: "com.example.kakin", signedDate: EngineFixture.start)
        #expect(payload.offerType == .winBack)
        #expect(try await fixture.engine.renewalInfo(originalTransactionID: original).eligibleWinBackOfferIDs == nil)

        // Lapsed again: the offer was used, so it is neither listed nor granted a second time.
        try await fixture.engine.setAutoRenew(false, originalTransactionID: original)
        fixture.days(70)
        try await fixture.engine.processRenewals()
        #expect(try await fixture.engine.renewalInfo(originalTransactionID: original).eligibleWinBackOfferIDs == nil)
        #expect(try await winBack(fixture, tester).failure == .ineligibleForOffer)
    }

    @Test func noWinBackDuringGracePeriodOrBillingRetry() async throws {
        let fixture = try EngineFixture()
        let (tester, original) = try await subscribed(fixture)
        try await fixture.engine.failRenewals(originalTransactionID: original)
        fixture.days(8)
        try await fixture.engine.processRenewals()
        #expect(try await fixture.engine.status(originalTransactionID: original) == .billingGracePeriod)
        #expect(try await winBack(fixture, tester).failure == .ineligibleForOffer)
        #expect(try await fixture.engine.renewalInfo(originalTransactionID: original).eligibleWinBackOfferIDs == nil)
        fixture.days(20)
        try await fixture.engine.processRenewals()
        #expect(try await fixture.engine.status(originalTransactionID: original) == .billingRetry)
        #expect(try await winBack(fixture, tester).failure == .ineligibleForOffer)
        #expect(try await fixture.engine.renewalInfo(originalTransactionID: original).eligibleWinBackOfferIDs == nil)
        // Once billing retry gives up, the subscription has expired and the offer opens.
        fixture.days(60)
        try await fixture.engine.processRenewals()
        #expect(try await fixture.engine.status(originalTransactionID: original) == .expired)
        #expect(try await winBack(fixture, tester).transaction?.offerType == .winBack)
    }
}

@Suite struct OfferCodeTests {
    @Test func aCodeBuysAConsumableAtItsOfferPrice() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "c@example.com")
        try await fixture.engine.defineOfferCode(.init(code: "Free-Points", productID: "points", offerID: "freePoints"))
        let bought = try #require(
            try await fixture.engine.redeemOfferCode("free-points", testerID: tester.id).transaction)
        #expect(bought.productID == "points")
        #expect(bought.offerType == .offerCode)
        #expect(bought.offerIdentifier == "freePoints")
        #expect(bought.offerDiscountType == .oneTime)
        #expect(bought.priceMilliunits == 0)
        #expect(await fixture.engine.events().last?.notificationType == .oneTimeCharge)
        #expect(try await fixture.engine.updates(of: tester.id, after: 0).transactions.map(\.id) == [bought.id])
        #expect(
            try await fixture.engine.redeemOfferCode("FREE-POINTS", testerID: tester.id).failure == .ineligibleForOffer,
            "one redemption per customer")
        #expect(await fixture.engine.offerCodes().first?.redeemedBy == [tester.id])
    }

    @Test func aOneTimeCodeWorksOnceAndANonConsumableOwnedIsNotSoldAgain() async throws {
        let fixture = try EngineFixture()
        let first = try await fixture.engine.createTester(name: "a@example.com")
        let second = try await fixture.engine.createTester(name: "b@example.com")
        try await fixture.engine.defineOfferCode(
            .init(code: "HALF", productID: "removeAd", offerID: "halfOff", maximumRedemptions: 1))
        let bought = try #require(try await fixture.engine.redeemOfferCode("HALF", testerID: first.id).transaction)
        #expect(bought.priceMilliunits == 490)
        #expect(try await fixture.engine.redeemOfferCode("HALF", testerID: second.id).failure == .ineligibleForOffer)
        try await fixture.engine.defineOfferCode(.init(code: "HALF2", productID: "removeAd", offerID: "halfOff"))
        #expect(try await fixture.engine.redeemOfferCode("HALF2", testerID: first.id).failure == .ineligibleForOffer)
        try await fixture.engine.defineOfferCode(.init(code: "WRONG", productID: "removeAd", offerID: "nope"))
        #expect(
            try await fixture.engine.redeemOfferCode("WRONG", testerID: second.id).failure == .invalidOfferIdentifier)
        await #expect(throws: SandboxError(.unknownOfferCode)) {
            try await fixture.engine.redeemOfferCode("MISSING", testerID: first.id)
        }
        await #expect(throws: SandboxError(.invalidRequest)) {
            try await fixture.engine.defineOfferCode(
                .init(code: "X", productID: "points", offerID: "a", maximumRedemptions: 0))
        }
    }

    @Test func aCodeStartsASubscriptionOrAppliesAtTheNextRenewal() async throws {
        let fixture = try EngineFixture()
        try await fixture.engine.defineOfferCode(.init(code: "SPRING", productID: "monthly", offerID: "spring"))
        let newcomer = try await fixture.engine.createTester(name: "n@example.com")
        let started = try #require(
            try await fixture.engine.redeemOfferCode("SPRING", testerID: newcomer.id).transaction)
        #expect(started.offerType == .offerCode)
        #expect(started.offerIdentifier == "spring")
        #expect(started.offerDiscountType == .freeTrial)
        #expect(started.offerPeriod == "P1M")
        #expect(started.priceMilliunits == 0)
        let event = try #require(await fixture.engine.events().last)
        #expect(event.notificationType == .offerRedeemed)
        #expect(event.subtype == .initialBuy)

        // An active subscriber (yearly) redeems: nothing changes now, the offer starts at renewal.
        let subscriber = try await fixture.engine.createTester(name: "s@example.com")
        let yearly = try #require(
            try await fixture.engine.purchase(.init(testerID: subscriber.id, productID: "yearly")).transaction)
        let kept = try #require(try await fixture.engine.redeemOfferCode("SPRING", testerID: subscriber.id).transaction)
        #expect(kept.id == yearly.id)
        #expect(await fixture.engine.events().last?.notificationType == .offerRedeemed)
        let info = try await fixture.engine.renewalInfo(originalTransactionID: yearly.id)
        #expect(info.offerType == .offerCode)
        #expect(info.offerIdentifier == "spring")
        #expect(info.autoRenewProductID == "monthly")
        #expect(info.renewalPrice == 0)
        fixture.days(366)
        try await fixture.engine.processRenewals()
        let renewals = await fixture.engine.transactions(of: subscriber.id).filter { $0.reason == .renewal }
        #expect(renewals.first?.offerType == .offerCode)
        #expect(renewals.first?.priceMilliunits == 0)
        #expect(renewals.first?.productID == "monthly")
        fixture.days(31)
        try await fixture.engine.processRenewals()
        let prices = await fixture.engine.transactions(of: subscriber.id).filter { $0.reason == .renewal }
            .map(\.priceMilliunits)
        #expect(prices == [0, 4_990], "the free month, then the full price")
    }
}

extension Date {
    /// This date moved by whole UTC months.
    func advancedByMonths(_ months: Int) -> Date {
        SubscriptionPeriod(value: months, unit: .month).advance(self)
    }
}
