import Foundation
import Kakin
import KakinShopModel
import Testing

/// The banner is a pure function of the customer: every state from a hand-made answer.
@Suite struct SubscriptionBannerTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: TimeInterval = 86_400

    static func customer(
        isActive: Bool = true, expires: TimeInterval? = 20 * day, willRenew: Bool? = true,
        period: CustomerInfo.Entitlement.PeriodType? = .normal, billingIssue: TimeInterval? = nil,
        grace: TimeInterval? = nil, source: CustomerInfo.Source = .server, identifier: String = "premium"
    ) -> CustomerInfo {
        CustomerInfo(
            appUserID: "mio",
            entitlements: [
                .init(
                    identifier: identifier, productID: "com.example.kakin.premium.monthly", isActive: isActive,
                    expiresDate: expires.map { now.addingTimeInterval($0) }, transactionID: "2", originalTransactionID: "1",
                    willRenew: willRenew, periodType: period,
                    billingIssueDetectedAt: billingIssue.map { now.addingTimeInterval($0) },
                    gracePeriodExpiresAt: grace.map { now.addingTimeInterval($0) })
            ], balances: [:], source: source)
    }

    static func banner(_ customer: CustomerInfo?) -> SubscriptionBanner {
        SubscriptionBanner(customer: customer, entitlement: "premium", at: now)
    }

    @Test func eachStateOfASubscription() {
        let end = Self.now.addingTimeInterval(20 * Self.day)
        #expect(Self.banner(Self.customer()) == .renews(on: end))
        #expect(Self.banner(Self.customer(willRenew: false)) == .willNotRenew(endsAt: end))
        #expect(Self.banner(Self.customer(period: .trial)) == .trial(endsAt: end, willRenew: true))
        #expect(Self.banner(Self.customer(willRenew: false, period: .trial)) == .trial(endsAt: end, willRenew: false))
        #expect(Self.banner(Self.customer(isActive: false, expires: -Self.day, willRenew: false)) == .expired)
    }

    @Test func aBillingProblemComesFirst() {
        // In the grace period: access continues, and the customer is asked to act.
        let grace = Self.customer(
            expires: -2 * Self.day, period: .trial, billingIssue: -2 * Self.day, grace: 14 * Self.day)
        let inGrace = Self.banner(grace)
        #expect(
            inGrace
                == .gracePeriod(
                    until: Self.now.addingTimeInterval(14 * Self.day), since: Self.now.addingTimeInterval(-2 * Self.day)))
        #expect(inGrace.needsAction)
        // The same answer read after the grace period ended (kept on the device): access has stopped.
        let later = SubscriptionBanner(customer: grace, entitlement: "premium", at: Self.now.addingTimeInterval(15 * Self.day))
        #expect(later == .billingIssue(since: Self.now.addingTimeInterval(-2 * Self.day)))
        // Billing retry without a grace period: inactive, the App Store still trying.
        let retry = Self.banner(Self.customer(isActive: false, expires: -Self.day, billingIssue: -Self.day))
        #expect(retry == .billingIssue(since: Self.now.addingTimeInterval(-Self.day)))
        #expect(retry.needsAction && !Self.banner(Self.customer()).needsAction)
    }

    @Test func nothingIsShownWithoutTheServersRenewalFacts() {
        #expect(Self.banner(nil) == .none, "no customer yet")
        #expect(Self.banner(Self.customer(identifier: "removeAds")) == .none, "no such entitlement")
        #expect(Self.banner(Self.customer(source: .device)) == .none, "computed on the device: no guess")
        #expect(Self.banner(Self.customer(expires: nil, willRenew: nil, period: nil)) == .none, "not a subscription")
    }

    @Test func anActiveEntitlementSpeaksForTheCustomer() {
        // Two products of the group grant `premium`: the lapsed monthly and the active yearly.
        var customer = Self.customer()
        customer.entitlements.insert(
            .init(
                identifier: "premium", productID: "com.example.kakin.premium.yearly", isActive: false,
                expiresDate: Self.now.addingTimeInterval(-30 * Self.day), transactionID: "9", originalTransactionID: "9",
                willRenew: false, periodType: .normal),
            at: 0)
        #expect(Self.banner(customer) == .renews(on: Self.now.addingTimeInterval(20 * Self.day)))
    }

    @Test func theMessagesSayWhatToDo() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        let english = Locale(identifier: "en_US")
        let grace = SubscriptionBanner.gracePeriod(until: Self.now, since: Self.now)
        #expect(grace.message(locale: english, timeZone: utc)?.contains("Update your payment method by January 15, 2027") == true)
        #expect(SubscriptionBanner.billingIssue(since: Self.now).message()?.contains("payment method") == true)
        #expect(SubscriptionBanner.none.message() == nil)
        #expect(
            SubscriptionBanner.trial(endsAt: Self.now, willRenew: false).message(locale: english, timeZone: utc)
                == "Your free trial ends on January 15, 2027. Your subscription will not start.")
    }
}
