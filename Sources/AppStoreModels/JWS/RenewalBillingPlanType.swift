/// How the next renewal of a subscription is billed, as renewal info says (`renewalBillingPlanType`,
/// and `commitmentRenewalBillingPlanType` inside ``RenewalCommitmentInfo``).
///
/// Apple names this type apart from the transaction's ``BillingPlanType`` although the values are
/// the same, so that each can grow on its own; Kakin follows Apple's naming.
public struct RenewalBillingPlanType: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The next period (or commitment) is charged in full when it starts.
    public static let billedUpfront = Self(rawValue: "BILLED_UPFRONT")
    /// The next period is charged month by month within a commitment.
    public static let monthly = Self(rawValue: "MONTHLY")

    public static let knownValues: [Self] = [.billedUpfront, .monthly]
}
