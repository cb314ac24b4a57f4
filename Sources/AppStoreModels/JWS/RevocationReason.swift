/// Why the App Store refunded or revoked a transaction.
public struct RevocationReason: WireEnum {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Refunded for a reason other than a problem with the app, such as an accidental purchase.
    public static let other = Self(rawValue: 0)
    /// Refunded because the customer reported a problem with the app or the content.
    public static let appIssue = Self(rawValue: 1)

    public static let knownValues: [Self] = [.other, .appIssue]
}
