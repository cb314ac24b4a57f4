/// The kind of in-app product a transaction is for, as Apple writes it in `type`.
public struct ProductType: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A subscription that renews by itself until the customer cancels it.
    public static let autoRenewableSubscription = Self(rawValue: "Auto-Renewable Subscription")
    /// A product bought once and kept forever, such as a feature unlock.
    public static let nonConsumable = Self(rawValue: "Non-Consumable")
    /// A product used up after purchase and bought again, such as in-game currency.
    public static let consumable = Self(rawValue: "Consumable")
    /// A subscription for a fixed time that the customer renews by hand.
    public static let nonRenewingSubscription = Self(rawValue: "Non-Renewing Subscription")

    public static let knownValues: [Self] = [
        .autoRenewableSubscription, .nonConsumable, .consumable, .nonRenewingSubscription,
    ]
}
