/// How much of a transaction the App Store took back.
public struct RevocationType: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The whole price was refunded.
    public static let refundFull = Self(rawValue: "REFUND_FULL")
    /// Part of the price was refunded; see `revocationPercentage`.
    public static let refundProrated = Self(rawValue: "REFUND_PRORATED")
    /// Access ended because the purchaser stopped sharing it with the family.
    public static let familyRevoke = Self(rawValue: "FAMILY_REVOKE")

    public static let knownValues: [Self] = [.refundFull, .refundProrated, .familyRevoke]
}
