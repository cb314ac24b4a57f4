import Foundation
import Kakin
import KakinShopModel
import Testing

/// A subscription's life as the shop's banner tells it, against a real `kakin serve`: a free
/// trial, automatic renewal turned off and on, a failed renewal in its grace period, access paused
/// after the grace period, and recovery once the customer fixed their payment method. The test
/// moves the sandbox App Store's clock and billing through its control API; the sandbox tells the
/// purchase server through App Store Server Notifications, and the shop reads the banner at the
/// sandbox's time.
@MainActor @Suite(.enabled(if: KakinServe.executable != nil, KakinServe.absent))
struct ShopSubscriptionLiveTests {
    static let day: TimeInterval = 86_400

    /// The same instant to within a millisecond: the store writes each date in whole
    /// milliseconds, rounding each down on its own, so a purchase date plus seven days can be one
    /// millisecond off the trial's end as the store wrote it.
    static func same(_ date: Date, _ other: Date) -> Bool { abs(date.timeIntervalSince(other)) < 0.0015 }

    /// Whether `banner` is a free trial ending at `end` (to the millisecond) that renews or not.
    static func isTrial(_ banner: SubscriptionBanner, endingAt end: Date, willRenew: Bool) -> Bool {
        guard case .trial(let endsAt, let renews) = banner else { return false }
        return same(endsAt, end) && renews == willRenew
    }

    @Test func aFreeTrialThenABillingProblemThenRecovery() async throws {
        try await KakinServe.with { serve in
            let sandbox = SandboxControl(serve: serve)
            try await sandbox.addTester("ren")
            try await sandbox.settings(["gracePeriodDays": 16])
            let time = SandboxTime()
            try await serve.withShop(tester: "ren", device: "phone", time: time) { shop in
                // A new customer buys the monthly plan: the store applies its free week.
                let monthly = try shop.item(Catalog.monthly)
                guard case .purchased(let bought, _?) = await shop.purchase(monthly.product) else {
                    Issue.record("the subscription was not granted: \(shop.notice?.message ?? "")")
                    return
                }
                let trialEnd = bought.purchaseDate.addingTimeInterval(7 * Self.day)
                #expect(
                    Self.isTrial(shop.banner, endingAt: trialEnd, willRenew: true),
                    "\(shop.banner), the trial ending at \(trialEnd.timeIntervalSince1970)")
                #expect(try shop.item(Catalog.monthly).isOwned && !shop.banner.needsAction)
                let original = bought.originalID

                // The customer turns automatic renewal off in Settings, then on again.
                try await sandbox.subscription(original, "auto-renew/off")
                try await refreshUntil("the trial no longer renews", shop) {
                    Self.isTrial(shop.banner, endingAt: trialEnd, willRenew: false)
                }
                try await sandbox.subscription(original, "auto-renew/on")
                try await refreshUntil("the trial renews again", shop) {
                    Self.isTrial(shop.banner, endingAt: trialEnd, willRenew: true)
                }

                // The first charge fails: a billing problem, access kept through the grace period.
                try await sandbox.subscription(original, "fail-renewals")
                time.follow(try await sandbox.advanceClock(by: 8 * Self.day))
                let graceEnd = trialEnd.addingTimeInterval(16 * Self.day)
                try await refreshUntil("the grace period is shown", shop) {
                    if case .gracePeriod(let until, _) = shop.banner { return Self.same(until, graceEnd) }
                    return false
                }
                #expect(shop.banner.needsAction && shop.isEntitled(to: "premium"))
                shop.manageSubscriptions()
                #expect(shop.isManagingSubscriptions, "the view shows the App Store's sheet")
                await shop.manageSubscriptionsClosed()
                #expect(!shop.isManagingSubscriptions)

                // The grace period ends with the charge still failing: access is paused.
                time.follow(try await sandbox.advanceClock(by: 16 * Self.day))
                await shop.refresh()
                guard case .billingIssue(let since) = shop.banner else {
                    Issue.record("expected a billing problem without access, got \(shop.banner)")
                    return
                }
                #expect(since > trialEnd && since < graceEnd)
                #expect(!shop.isEntitled(to: "premium") && shop.banner.needsAction)

                // The customer fixes their payment method: the subscription renews, the banner says so.
                try await sandbox.subscription(original, "resolve-billing")
                try await refreshUntil("the subscription renews", shop) {
                    if case .renews(let date) = shop.banner { return date > time.now }
                    return false
                }
                #expect(shop.isEntitled(to: "premium"))
                #expect(shop.entitlement("premium")?.periodType == .normal)
            }
        }
    }
}
