/// Whether the order ID given to Look Up Order ID belongs to a real order.
public struct OrderLookupStatus: WireEnum {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The order ID is valid and the response lists its transactions.
    public static let valid = Self(rawValue: 0)
    /// The order ID is unknown.
    public static let invalid = Self(rawValue: 1)

    public static let knownValues: [Self] = [.valid, .invalid]
}
