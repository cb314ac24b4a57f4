/// How a subscription with a commitment is billed.
///
/// Apple introduced commitment plans (a fixed number of periods billed monthly or all at once) late;
/// Kakin keeps the value so that newer payloads decode, but does not simulate these plans.
public struct BillingPlanType: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The whole commitment is charged at the start.
    public static let billedUpfront = Self(rawValue: "BILLED_UPFRONT")
    /// The commitment is charged month by month.
    public static let monthly = Self(rawValue: "MONTHLY")

    public static let knownValues: [Self] = [.billedUpfront, .monthly]
}
