/// Why an auto-renewable subscription expired.
public struct ExpirationIntent: WireEnum {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The customer turned off automatic renewal.
    public static let customerCancelled = Self(rawValue: 1)
    /// The App Store could not charge the customer.
    public static let billingError = Self(rawValue: 2)
    /// The customer did not agree to a price increase that needed their consent.
    public static let didNotConsentToPriceIncrease = Self(rawValue: 3)
    /// The product was not for sale when the subscription tried to renew.
    public static let productNotAvailable = Self(rawValue: 4)
    /// Any other reason.
    public static let other = Self(rawValue: 5)

    public static let knownValues: [Self] = [
        .customerCancelled, .billingError, .didNotConsentToPriceIncrease, .productNotAvailable, .other,
    ]
}
