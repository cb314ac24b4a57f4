/// How a subscription transaction is billed (`billingPlanType`).
///
/// A subscription sold with a commitment (such as a monthly plan with a 12-month commitment) is
/// billed month by month; every other subscription is billed up front for its whole period. The
/// sandbox simulates monthly plans with a 12-month commitment (see `StoreSandbox`).
public struct BillingPlanType: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The whole period is charged at its start.
    public static let billedUpfront = Self(rawValue: "BILLED_UPFRONT")
    /// The commitment is charged month by month.
    public static let monthly = Self(rawValue: "MONTHLY")

    public static let knownValues: [Self] = [.billedUpfront, .monthly]
}
