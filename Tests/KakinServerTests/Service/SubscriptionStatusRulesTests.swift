import AppStoreModels
import Foundation
import KakinWire
import KakinTestSupport
import Testing

@testable import KakinServer
@testable import KakinLedger

/// What a subscription entitlement says of renewal: whether it renews, the kind of period, a
/// billing problem and its grace period, derived from the transactions and the renewal state.
@Suite("Entitlement rules: subscription status")
struct SubscriptionStatusRulesTests {
    static let day: TimeInterval = 86_400
    static let grants = GrantsCatalog(grants: [
        "monthly": [.entitlement("premium")], "lifetime": [.entitlement("removeAds")],
    ])

    static func subscription(
        _ id: String, original: String = "o1", purchasedDay: Double = 0, days: Double = 30,
        periodType: Entitlement.PeriodType? = .normal, revoked: Bool = false
    ) -> RecordedTransaction {
        RecordedTransaction(
            transactionID: id, originalTransactionID: original, bundleID: Fixture.bundleID, appUserID: "ann",
            productID: "monthly", productType: .autoRenewableSubscription, purchaseDate: Fixture.at(purchasedDay * day),
            expiresDate: Fixture.at((purchasedDay + days) * day),
            revocationDate: revoked ? Fixture.at(purchasedDay * day + 60) : nil, environment: .sandbox,
            source: .app, recordedAt: Fixture.at(purchasedDay * day), periodType: periodType)
    }

    static func renewal(
        original: String = "o1", autoRenew: AutoRenewStatus? = .on, intent: ExpirationIntent? = nil,
        issueDay: Double? = nil, graceEndDay: Double? = nil
    ) -> SubscriptionRenewal {
        SubscriptionRenewal(
            bundleID: Fixture.bundleID, originalTransactionID: original, autoRenewStatus: autoRenew,
            expirationIntent: intent, billingIssueDetectedAt: issueDay.map { Fixture.at($0 * day) },
            gracePeriodExpiresAt: graceEndDay.map { Fixture.at($0 * day) }, signedDate: Fixture.at(0),
            updatedAt: Fixture.at(0))
    }

    static func premium(
        _ transactions: [RecordedTransaction], _ renewals: [SubscriptionRenewal] = [], day atDay: Double
    ) throws -> Entitlement {
        let entitlements = EntitlementRules.entitlements(
            transactions: transactions, grants: grants,
            renewals: Dictionary(uniqueKeysWithValues: renewals.map { ($0.originalTransactionID, $0) }),
            at: Fixture.at(atDay * day))
        return try #require(entitlements.first { $0.identifier == "premium" })
    }

    @Test("a trial without renewal state: the period type, and it renews while active")
    func trialWithoutRenewalState() throws {
        let active = try Self.premium([Self.subscription("t1", days: 7, periodType: .trial)], day: 1)
        #expect(active.isActive && active.periodType == .trial && active.willRenew == true)
        #expect(active.billingIssueDetectedAt == nil && active.gracePeriodExpiresAt == nil)
        let lapsed = try Self.premium([Self.subscription("t1", days: 7, periodType: .trial)], day: 8)
        #expect(!lapsed.isActive && lapsed.willRenew == false)
    }

    @Test("auto-renewal turned off: still active, does not renew")
    func autoRenewOff() throws {
        let entitlement = try Self.premium([Self.subscription("t1")], [Self.renewal(autoRenew: .off)], day: 10)
        #expect(entitlement.isActive && entitlement.willRenew == false)
    }

    @Test("a failed renewal in its grace period stays active until the grace period ends")
    func gracePeriod() throws {
        let transactions = [Self.subscription("t1")]
        let renewal = Self.renewal(issueDay: 30, graceEndDay: 46)
        let inGrace = try Self.premium(transactions, [renewal], day: 35)
        #expect(inGrace.isActive && inGrace.willRenew == true)
        #expect(inGrace.billingIssueDetectedAt == Fixture.at(30 * Self.day))
        #expect(inGrace.gracePeriodExpiresAt == Fixture.at(46 * Self.day))
        let retrying = try Self.premium(transactions, [renewal], day: 47)
        #expect(!retrying.isActive && retrying.billingIssueDetectedAt == Fixture.at(30 * Self.day))
        // Without a grace period, billing retry gives no access.
        let noGrace = try Self.premium(transactions, [Self.renewal(issueDay: 30)], day: 31)
        #expect(!noGrace.isActive && noGrace.billingIssueDetectedAt != nil && noGrace.willRenew == true)
        // A grace period without a billing problem gives nothing.
        #expect(!(try Self.premium(transactions, [Self.renewal(graceEndDay: 46)], day: 35)).isActive)
    }

    @Test("the renewal state describes the latest transaction of its subscription only")
    func latestTransactionOnly() throws {
        let first = Self.subscription("t1", periodType: .trial)
        let second = Self.subscription("t2", purchasedDay: 30, periodType: .normal)
        let entitlement = try Self.premium(
            [first, second], [Self.renewal(issueDay: 60, graceEndDay: 76)], day: 65)
        #expect(entitlement.transactionID == "t2" && entitlement.isActive && entitlement.periodType == .normal)
        // The older transaction gets no grace from its subscription's state.
        let olderAlone = EntitlementRules.entitlements(
            transactions: [first, second], grants: Self.grants,
            renewals: ["o1": Self.renewal(issueDay: 60, graceEndDay: 76)], at: Fixture.at(65 * Self.day))
        #expect(olderAlone.count == 1 && olderAlone[0].transactionID == "t2")
    }

    @Test("expired for good or refunded: does not renew; refunded gets no grace")
    func expiredOrRefunded() throws {
        let expired = try Self.premium(
            [Self.subscription("t1")], [Self.renewal(autoRenew: .on, intent: .billingError)], day: 40)
        #expect(!expired.isActive && expired.willRenew == false)
        let retrying = try Self.premium(
            [Self.subscription("t1")], [Self.renewal(autoRenew: .on, intent: .billingError, issueDay: 30)], day: 40)
        #expect(retrying.willRenew == true, "still retried while the billing problem lasts")
        let refunded = try Self.premium(
            [Self.subscription("t1", revoked: true)], [Self.renewal(issueDay: 30, graceEndDay: 46)], day: 35)
        #expect(!refunded.isActive && refunded.willRenew == false)
    }

    @Test("entitlements that are not subscriptions carry none of the subscription fields")
    func nonSubscriptions() throws {
        let lifetime = RecordedTransaction(
            transactionID: "n1", originalTransactionID: "n1", bundleID: Fixture.bundleID, appUserID: "ann",
            productID: "lifetime", productType: .nonConsumable, purchaseDate: Fixture.at(0), environment: .sandbox,
            source: .app, recordedAt: Fixture.at(0))
        let entitlements = EntitlementRules.entitlements(
            transactions: [lifetime], grants: Self.grants, renewals: ["n1": Self.renewal(original: "n1", issueDay: 1)],
            at: Fixture.at(10))
        let removeAds = try #require(entitlements.first)
        #expect(removeAds.isActive)
        #expect(removeAds.willRenew == nil && removeAds.periodType == nil)
        #expect(removeAds.billingIssueDetectedAt == nil && removeAds.gracePeriodExpiresAt == nil)
    }

    @Test("the period type follows Apple's offer type and discount")
    func periodTypes() {
        typealias PeriodType = Entitlement.PeriodType
        #expect(PeriodType(offerType: nil, discountType: nil) == .normal)
        #expect(PeriodType(offerType: .introductory, discountType: .freeTrial) == .trial)
        #expect(PeriodType(offerType: .introductory, discountType: .payAsYouGo) == .intro)
        #expect(PeriodType(offerType: .introductory, discountType: .payUpFront) == .intro)
        #expect(PeriodType(offerType: .promotional, discountType: .payAsYouGo) == .offer)
        #expect(PeriodType(offerType: .promotional, discountType: .freeTrial) == .trial)
        #expect(PeriodType(offerType: .offerCode, discountType: nil) == .offer)
        #expect(PeriodType(offerType: .winBack, discountType: .payUpFront) == .offer)
        #expect(PeriodType(offerType: OfferType(rawValue: 9), discountType: nil) == .offer)
    }

    // MARK: What a notification reports

    static func report(
        _ type: NotificationTypeV2, _ subtype: NotificationSubtype? = nil, autoRenew: AutoRenewStatus = .on,
        retrying: Bool = false, graceEnd: Date? = nil, intent: ExpirationIntent? = nil, signedAt: TimeInterval = 100
    ) throws -> SubscriptionRenewal {
        let info = JWSRenewalInfoDecodedPayload(
            expirationIntent: intent, originalTransactionID: "o1", autoRenewStatus: autoRenew,
            isInBillingRetryPeriod: retrying, gracePeriodExpiresDate: graceEnd)
        return try #require(
            SubscriptionRenewal(
                bundleID: Fixture.bundleID, type: type, subtype: subtype, notificationUUID: "n",
                notificationSignedDate: Fixture.at(signedAt), renewalInfo: info, originalTransactionID: nil,
                receivedAt: Fixture.at(signedAt + 1)))
    }

    @Test("each notification's renewal state")
    func notificationReports() throws {
        let graceEnd = Fixture.at(16 * Self.day)
        let failed = try Self.report(.didFailToRenew, .gracePeriod, retrying: true, graceEnd: graceEnd)
        #expect(failed.billingIssueDetectedAt == Fixture.at(100) && failed.gracePeriodExpiresAt == graceEnd)
        #expect(failed.willRenew == true && failed.signedDate == Fixture.at(100))
        let failedWithoutFlags = try Self.report(.didFailToRenew)
        #expect(failedWithoutFlags.billingIssueDetectedAt != nil && failedWithoutFlags.gracePeriodExpiresAt == nil)
        let graceOver = try Self.report(.gracePeriodExpired, retrying: true, graceEnd: graceEnd)
        #expect(graceOver.billingIssueDetectedAt != nil)
        let recovered = try Self.report(.didRenew, .billingRecovery, retrying: true, graceEnd: graceEnd)
        #expect(recovered.billingIssueDetectedAt == nil && recovered.gracePeriodExpiresAt == nil)
        let gaveUp = try Self.report(.expired, .billingRetry, intent: .billingError)
        #expect(gaveUp.billingIssueDetectedAt != nil && gaveUp.willRenew == true)
        let cancelled = try Self.report(.didChangeRenewalStatus, .autoRenewDisabled, autoRenew: .off)
        #expect(cancelled.willRenew == false && cancelled.billingIssueDetectedAt == nil)
        let lapsed = try Self.report(.expired, .voluntary, autoRenew: .off, intent: .customerCancelled)
        #expect(lapsed.willRenew == false && lapsed.billingIssueDetectedAt == nil)
        // The renewal info's own signing date orders it when it has one.
        var info = JWSRenewalInfoDecodedPayload(originalTransactionID: "o1", autoRenewStatus: .on)
        info.signedDate = Fixture.at(50)
        let signed = SubscriptionRenewal(
            bundleID: Fixture.bundleID, type: .subscribed, subtype: .initialBuy, notificationUUID: "n",
            notificationSignedDate: Fixture.at(60), renewalInfo: info, originalTransactionID: nil,
            receivedAt: Fixture.at(61))
        #expect(signed?.signedDate == Fixture.at(50))
        // Renewal info that names no subscription, in a notification without a transaction: nothing.
        #expect(
            SubscriptionRenewal(
                bundleID: Fixture.bundleID, type: .didRenew, subtype: nil, notificationUUID: "n",
                notificationSignedDate: Fixture.at(60), renewalInfo: JWSRenewalInfoDecodedPayload(),
                originalTransactionID: nil, receivedAt: Fixture.at(61)) == nil)
    }
}
