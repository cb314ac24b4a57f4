/// The detail of a ``NotificationTypeV2``; many notification types come without one.
public struct NotificationSubtype: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A first purchase in the subscription group, or a first offer redemption.
    public static let initialBuy = Self(rawValue: "INITIAL_BUY")
    /// The customer subscribed again after the subscription had lapsed.
    public static let resubscribe = Self(rawValue: "RESUBSCRIBE")
    /// A move to a lower level; it takes effect at the next renewal.
    public static let downgrade = Self(rawValue: "DOWNGRADE")
    /// A move to a higher level; it takes effect at once.
    public static let upgrade = Self(rawValue: "UPGRADE")
    /// Automatic renewal was turned on.
    public static let autoRenewEnabled = Self(rawValue: "AUTO_RENEW_ENABLED")
    /// Automatic renewal was turned off.
    public static let autoRenewDisabled = Self(rawValue: "AUTO_RENEW_DISABLED")
    /// The subscription expired because the customer turned renewal off.
    public static let voluntary = Self(rawValue: "VOLUNTARY")
    /// The subscription expired because billing retry ended without a successful charge.
    public static let billingRetry = Self(rawValue: "BILLING_RETRY")
    /// The subscription expired because the customer did not accept a price increase.
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    /// A renewal failed but the customer keeps access during the billing grace period.
    public static let gracePeriod = Self(rawValue: "GRACE_PERIOD")
    /// A price increase awaits the customer's answer.
    public static let pending = Self(rawValue: "PENDING")
    /// The customer accepted a price increase, or one needed no consent.
    public static let accepted = Self(rawValue: "ACCEPTED")
    /// A renewal that had failed succeeded after all.
    public static let billingRecovery = Self(rawValue: "BILLING_RECOVERY")
    /// The subscription expired because the product was not for sale at renewal.
    public static let productNotForSale = Self(rawValue: "PRODUCT_NOT_FOR_SALE")
    /// A mass renewal date extension finished; see the notification's summary.
    public static let summary = Self(rawValue: "SUMMARY")
    /// A renewal date extension failed for one subscription.
    public static let failure = Self(rawValue: "FAILURE")
    /// An external purchase token was not reported to Apple in time.
    public static let unreported = Self(rawValue: "UNREPORTED")

    public static let knownValues: [Self] = [
        .initialBuy, .resubscribe, .downgrade, .upgrade, .autoRenewEnabled, .autoRenewDisabled, .voluntary,
        .billingRetry, .priceIncrease, .gracePeriod, .pending, .accepted, .billingRecovery, .productNotForSale,
        .summary, .failure, .unreported,
    ]
}
