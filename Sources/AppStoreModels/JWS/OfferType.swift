/// Which kind of subscription offer a transaction or an upcoming renewal uses.
public struct OfferType: WireEnum {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// An introductory offer for customers new to the subscription group.
    public static let introductory = Self(rawValue: 1)
    /// A promotional offer the app signed for an existing or lapsed subscriber.
    public static let promotional = Self(rawValue: 2)
    /// An offer redeemed with an offer code.
    public static let offerCode = Self(rawValue: 3)
    /// A win-back offer for a customer whose subscription lapsed.
    public static let winBack = Self(rawValue: 4)

    public static let knownValues: [Self] = [.introductory, .promotional, .offerCode, .winBack]
}
