public import AppStoreModels
public import Foundation
public import KakinCore

/// What the server last learned of one subscription's renewal (by app and original transaction),
/// from the App Store Server Notifications that carry its signed renewal info: whether it will
/// renew, and whether the App Store has trouble charging for it.
///
/// The ledger keeps one per subscription and replaces it only with what Apple signed later
/// (``signedDate``): a notification delivered late or twice changes nothing.
public struct SubscriptionRenewal: Hashable, Sendable {
    /// The app.
    public var bundleID: String
    /// The subscription's original transaction ID, shared by all its renewals.
    public var originalTransactionID: String
    /// Apple's `autoRenewStatus`: whether the customer leaves automatic renewal on; `nil` when the
    /// renewal info does not say.
    public var autoRenewStatus: AutoRenewStatus?
    /// Apple's `expirationIntent`: why the subscription expired, when it did.
    public var expirationIntent: ExpirationIntent?
    /// When the billing problem was first seen (the signing date of the first notification that
    /// reported it); `nil` while billing is fine.
    public var billingIssueDetectedAt: Date?
    /// When the billing grace period ends, while there is a billing problem and the app has one.
    public var gracePeriodExpiresAt: Date?
    /// The expiry of the period whose renewal failed, when the notification carried its
    /// transaction: the grace period runs from there. `nil` when not known.
    public var periodExpiresAt: Date?
    /// When Apple signed what this state was read from (the renewal info's `signedDate`, or the
    /// notification's): newer state replaces older, never the other way round.
    public var signedDate: Date
    /// The notification this state was read from.
    public var notificationUUID: String?
    /// When the server stored it.
    public var updatedAt: Date

    /// Creates a renewal state from its parts.
    public init(
        bundleID: String, originalTransactionID: String, autoRenewStatus: AutoRenewStatus?,
        expirationIntent: ExpirationIntent? = nil, billingIssueDetectedAt: Date? = nil,
        gracePeriodExpiresAt: Date? = nil, signedDate: Date, notificationUUID: String? = nil, updatedAt: Date,
        periodExpiresAt: Date? = nil
    ) {
        self.periodExpiresAt = periodExpiresAt
        self.bundleID = bundleID
        self.originalTransactionID = originalTransactionID
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.billingIssueDetectedAt = billingIssueDetectedAt
        self.gracePeriodExpiresAt = gracePeriodExpiresAt
        self.signedDate = signedDate
        self.notificationUUID = notificationUUID
        self.updatedAt = updatedAt
    }

    /// Whether the subscription renews at the end of its period: automatic renewal is on, and the
    /// subscription has not expired for good (while the App Store retries a failed charge it
    /// still tries to renew). `nil` when the renewal info did not say.
    public var willRenew: Bool? {
        guard let autoRenewStatus else { return nil }
        return autoRenewStatus == .on && (expirationIntent == nil || billingIssueDetectedAt != nil)
    }

    /// The state a verified notification describes, or `nil` when it carries no renewal info
    /// that names its subscription.
    ///
    /// A billing problem is seen in a `DID_FAIL_TO_RENEW` or `GRACE_PERIOD_EXPIRED` notification,
    /// or in renewal info that says the App Store is retrying the charge or gives a grace period;
    /// it is kept through the subscription's `EXPIRED` notification after a failed retry, and ends
    /// with a renewal (`DID_RENEW`, `BILLING_RECOVERY` included) or a new subscription
    /// (`SUBSCRIBED`). ``billingIssueDetectedAt`` is the notification's signing date here; the
    /// ledger keeps the earlier date of a problem it already knew.
    public init?(
        bundleID: String, type: NotificationTypeV2, subtype: NotificationSubtype?, notificationUUID: String,
        notificationSignedDate: Date?, renewalInfo: JWSRenewalInfoDecodedPayload,
        originalTransactionID fallbackOriginalID: String?, receivedAt: Date
    ) {
        guard let originalID = renewalInfo.originalTransactionID ?? fallbackOriginalID,
            let signedDate = renewalInfo.signedDate ?? notificationSignedDate
        else { return nil }
        let reportsProblem =
            type == .didFailToRenew || type == .gracePeriodExpired || renewalInfo.isInBillingRetryPeriod == true
            || renewalInfo.gracePeriodExpiresDate != nil
        let hasProblem: Bool
        switch type {
        case .didRenew, .subscribed: hasProblem = false
        case .expired: hasProblem = subtype == .billingRetry || reportsProblem
        default: hasProblem = reportsProblem
        }
        self.init(
            bundleID: bundleID, originalTransactionID: originalID, autoRenewStatus: renewalInfo.autoRenewStatus,
            expirationIntent: renewalInfo.expirationIntent, billingIssueDetectedAt: hasProblem ? signedDate : nil,
            gracePeriodExpiresAt: hasProblem ? renewalInfo.gracePeriodExpiresDate : nil, signedDate: signedDate,
            notificationUUID: notificationUUID, updatedAt: receivedAt)
    }
}

extension SubscriptionRenewal {
    /// The state the App Store Server API reports for a subscription (Get All Subscription
    /// Statuses), or `nil` when its renewal info names no subscription or signing date: a billing
    /// problem while the status is billing retry or grace period, or the renewal info says so.
    public init?(
        bundleID: String, status: SubscriptionStatus?, renewalInfo: JWSRenewalInfoDecodedPayload, receivedAt: Date
    ) {
        guard let originalID = renewalInfo.originalTransactionID, let signedDate = renewalInfo.signedDate else {
            return nil
        }
        let hasProblem =
            status == .billingRetry || status == .billingGracePeriod || renewalInfo.isInBillingRetryPeriod == true
            || renewalInfo.gracePeriodExpiresDate != nil
        self.init(
            bundleID: bundleID, originalTransactionID: originalID, autoRenewStatus: renewalInfo.autoRenewStatus,
            expirationIntent: renewalInfo.expirationIntent, billingIssueDetectedAt: hasProblem ? signedDate : nil,
            gracePeriodExpiresAt: hasProblem ? renewalInfo.gracePeriodExpiresDate : nil, signedDate: signedDate,
            updatedAt: receivedAt)
    }
}

extension SubscriptionPeriodType {
    /// The period a subscription transaction pays for, from its offer: a `FREE_TRIAL` discount is
    /// a trial whatever the offer; otherwise an introductory offer is `intro`, a promotional, offer
    /// code or win-back offer (or one Apple adds later) is `offer`, and no offer is `normal`.
    public init(offerType: OfferType?, discountType: OfferDiscountType?) {
        if discountType == .freeTrial {
            self = .trial
        } else if let offerType {
            self = offerType == .introductory ? .intro : .offer
        } else {
            self = .normal
        }
    }
}
