/// StoreKit's `SKError.Code`: why a payment or a request failed on the device.
///
/// The sandbox fails purchases with these codes, and the SDK maps them to its own errors, so both
/// sides speak the numbers Apple's `SKErrorDomain` uses.
public struct StoreKitErrorCode: WireEnum {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// An unknown or unexpected error.
    public static let unknown = Self(rawValue: 0)
    /// The client is not allowed to make the request.
    public static let clientInvalid = Self(rawValue: 1)
    /// The user cancelled the payment.
    public static let paymentCancelled = Self(rawValue: 2)
    /// A payment parameter was not recognised (for example a quantity below 1).
    public static let paymentInvalid = Self(rawValue: 3)
    /// The user is not allowed to authorise payments (parental controls).
    public static let paymentNotAllowed = Self(rawValue: 4)
    /// The product is not available in the current storefront.
    public static let storeProductNotAvailable = Self(rawValue: 5)
    /// The user has not allowed access to cloud service information.
    public static let cloudServicePermissionDenied = Self(rawValue: 6)
    /// The device could not connect to the network.
    public static let cloudServiceNetworkConnectionFailed = Self(rawValue: 7)
    /// The user revoked permission to use the cloud service.
    public static let cloudServiceRevoked = Self(rawValue: 8)
    /// The user has not yet acknowledged Apple's privacy policy.
    public static let privacyAcknowledgementRequired = Self(rawValue: 9)
    /// The app requested something it is not entitled to.
    public static let unauthorizedRequestData = Self(rawValue: 10)
    /// The offer identifier is not valid.
    public static let invalidOfferIdentifier = Self(rawValue: 11)
    /// The offer signature is not valid.
    public static let invalidSignature = Self(rawValue: 12)
    /// Offer parameters are missing.
    public static let missingOfferParams = Self(rawValue: 13)
    /// The offer's price is not valid.
    public static let invalidOfferPrice = Self(rawValue: 14)
    /// The customer is not eligible for the offer.
    public static let ineligibleForOffer = Self(rawValue: 18)
    /// The platform does not support the request.
    public static let unsupportedPlatform = Self(rawValue: 19)

    public static let knownValues: [Self] = [
        .unknown, .clientInvalid, .paymentCancelled, .paymentInvalid, .paymentNotAllowed, .storeProductNotAvailable,
        .cloudServicePermissionDenied, .cloudServiceNetworkConnectionFailed, .cloudServiceRevoked,
        .privacyAcknowledgementRequired, .unauthorizedRequestData, .invalidOfferIdentifier, .invalidSignature,
        .missingOfferParams, .invalidOfferPrice, .ineligibleForOffer, .unsupportedPlatform,
    ]

    /// Whether the failure is the user's choice rather than a problem: apps show no error for it.
    public var isUserCancellation: Bool { self == .paymentCancelled }
}
