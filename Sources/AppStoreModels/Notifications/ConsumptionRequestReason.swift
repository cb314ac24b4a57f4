/// Why the customer asked for a refund, as passed on in a `CONSUMPTION_REQUEST` notification.
public struct ConsumptionRequestReason: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The customer did not mean to buy it.
    public static let unintendedPurchase = Self(rawValue: "UNINTENDED_PURCHASE")
    /// The customer did not receive what they paid for.
    public static let fulfillmentIssue = Self(rawValue: "FULFILLMENT_ISSUE")
    /// The customer is not happy with what they got.
    public static let unsatisfiedWithPurchase = Self(rawValue: "UNSATISFIED_WITH_PURCHASE")
    /// A legal reason.
    public static let legal = Self(rawValue: "LEGAL")
    /// Any other reason.
    public static let other = Self(rawValue: "OTHER")

    public static let knownValues: [Self] = [
        .unintendedPurchase, .fulfillmentIssue, .unsatisfiedWithPurchase, .legal, .other,
    ]
}
