/// Whether an auto-renewable subscription will renew at the end of the current period.
public struct AutoRenewStatus: WireEnum {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The customer turned automatic renewal off; the subscription ends with the current period.
    public static let off = Self(rawValue: 0)
    /// The subscription will renew.
    public static let on = Self(rawValue: 1)

    public static let knownValues: [Self] = [.off, .on]
}
