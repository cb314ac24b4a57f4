/// The state of an auto-renewable subscription, in notifications and in Get All Subscription Statuses.
public struct SubscriptionStatus: WireEnum {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The subscription is paid for and running.
    public static let active = Self(rawValue: 1)
    /// The subscription ended.
    public static let expired = Self(rawValue: 2)
    /// A renewal failed and the App Store keeps trying to charge; the customer has no access.
    public static let billingRetry = Self(rawValue: 3)
    /// A renewal failed but the customer keeps access while the App Store keeps trying.
    public static let billingGracePeriod = Self(rawValue: 4)
    /// The App Store revoked the subscription, for example after a refund or a Family Sharing change.
    public static let revoked = Self(rawValue: 5)

    public static let knownValues: [Self] = [.active, .expired, .billingRetry, .billingGracePeriod, .revoked]

    /// Whether the customer should have access: true for ``active`` and ``billingGracePeriod``.
    public var grantsAccess: Bool { self == .active || self == .billingGracePeriod }
}
