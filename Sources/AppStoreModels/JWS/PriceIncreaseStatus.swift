/// Where a customer stands on a price increase of their subscription.
public struct PriceIncreaseStatus: WireEnum {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The customer was asked to accept a price increase and has not answered yet.
    public static let customerHasNotResponded = Self(rawValue: 0)
    /// The customer accepted the increase, or was told about one that needed no consent.
    public static let customerConsentedOrWasNotified = Self(rawValue: 1)

    public static let knownValues: [Self] = [.customerHasNotResponded, .customerConsentedOrWasNotified]
}
