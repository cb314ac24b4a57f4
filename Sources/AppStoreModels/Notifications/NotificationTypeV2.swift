/// What happened, in an App Store Server Notification V2. ``NotificationSubtype`` adds detail.
public struct NotificationTypeV2: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The customer subscribed to a group for the first time or again (subtypes `INITIAL_BUY`, `RESUBSCRIBE`).
    public static let subscribed = Self(rawValue: "SUBSCRIBED")
    /// The customer changed the product their subscription renews into (`UPGRADE`, `DOWNGRADE`, or none).
    public static let didChangeRenewalPref = Self(rawValue: "DID_CHANGE_RENEWAL_PREF")
    /// The customer turned automatic renewal on or off.
    public static let didChangeRenewalStatus = Self(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    /// The customer redeemed a promotional offer or an offer code.
    public static let offerRedeemed = Self(rawValue: "OFFER_REDEEMED")
    /// The subscription renewed (subtype `BILLING_RECOVERY` when a failed renewal finally succeeded).
    public static let didRenew = Self(rawValue: "DID_RENEW")
    /// The subscription expired; the subtype says why.
    public static let expired = Self(rawValue: "EXPIRED")
    /// A renewal failed because of a billing problem (subtype `GRACE_PERIOD` if access continues).
    public static let didFailToRenew = Self(rawValue: "DID_FAIL_TO_RENEW")
    /// The billing grace period ended without the customer fixing the billing problem.
    public static let gracePeriodExpired = Self(rawValue: "GRACE_PERIOD_EXPIRED")
    /// A price increase was announced (`PENDING`) or accepted (`ACCEPTED`).
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    /// The App Store refunded a transaction.
    public static let refund = Self(rawValue: "REFUND")
    /// The App Store declined a refund the customer asked for.
    public static let refundDeclined = Self(rawValue: "REFUND_DECLINED")
    /// The customer asked for a refund of a consumable and Apple asks the app for consumption data.
    public static let consumptionRequest = Self(rawValue: "CONSUMPTION_REQUEST")
    /// The developer extended the renewal date of one subscription.
    public static let renewalExtended = Self(rawValue: "RENEWAL_EXTENDED")
    /// A family member lost access to a product they had through Family Sharing.
    public static let revoke = Self(rawValue: "REVOKE")
    /// A test notification the developer asked for.
    public static let test = Self(rawValue: "TEST")
    /// A renewal date extension for many subscribers finished (`SUMMARY`) or failed for one (`FAILURE`).
    public static let renewalExtension = Self(rawValue: "RENEWAL_EXTENSION")
    /// The App Store reversed a refund it had granted.
    public static let refundReversed = Self(rawValue: "REFUND_REVERSED")
    /// An external purchase token was created but not reported (subtype `UNREPORTED`).
    public static let externalPurchaseToken = Self(rawValue: "EXTERNAL_PURCHASE_TOKEN")
    /// The customer bought a consumable, non-consumable or non-renewing subscription.
    public static let oneTimeCharge = Self(rawValue: "ONE_TIME_CHARGE")
    /// The customer withdrew consent to share data (for example an under-age user's guardian).
    public static let rescindConsent = Self(rawValue: "RESCIND_CONSENT")
    /// Advanced Commerce: the metadata of a subscription changed.
    public static let metadataUpdate = Self(rawValue: "METADATA_UPDATE")
    /// Advanced Commerce: a subscription was migrated.
    public static let migration = Self(rawValue: "MIGRATION")
    /// Advanced Commerce: the price of a subscription changed.
    public static let priceChange = Self(rawValue: "PRICE_CHANGE")

    public static let knownValues: [Self] = [
        .subscribed, .didChangeRenewalPref, .didChangeRenewalStatus, .offerRedeemed, .didRenew, .expired,
        .didFailToRenew, .gracePeriodExpired, .priceIncrease, .refund, .refundDeclined, .consumptionRequest,
        .renewalExtended, .revoke, .test, .renewalExtension, .refundReversed, .externalPurchaseToken,
        .oneTimeCharge, .rescindConsent, .metadataUpdate, .migration, .priceChange,
    ]
}
