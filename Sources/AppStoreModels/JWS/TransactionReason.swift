/// Why a transaction happened: the customer bought something, or a subscription renewed on its own.
public struct TransactionReason: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The customer started the purchase (including upgrades and offer redemptions).
    public static let purchase = Self(rawValue: "PURCHASE")
    /// The App Store renewed an auto-renewable subscription.
    public static let renewal = Self(rawValue: "RENEWAL")

    public static let knownValues: [Self] = [.purchase, .renewal]
}
