/// Why the developer extends a subscription's renewal date.
public struct ExtendReasonCode: WireEnum {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// No reason given.
    public static let undeclared = Self(rawValue: 0)
    /// To keep the customer happy.
    public static let customerSatisfaction = Self(rawValue: 1)
    /// Another reason.
    public static let other = Self(rawValue: 2)
    /// To make up for a service problem or outage.
    public static let serviceIssueOrOutage = Self(rawValue: 3)

    public static let knownValues: [Self] = [.undeclared, .customerSatisfaction, .other, .serviceIssueOrOutage]
}
