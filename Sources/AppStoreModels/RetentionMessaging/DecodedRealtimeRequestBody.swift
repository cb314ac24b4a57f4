public import Foundation

/// The signed payload of a `Get Retention Message` request: which subscriber opened the page where
/// they may cancel, for which product, in which locale (Apple's `DecodedRealtimeRequestBody`).
///
/// Apple asks the endpoint to check that `appAppleId` is the app's own and not to answer otherwise;
/// `SignedDataVerifier.verifyRealtimeRequest(_:at:)` does, with the signature and the environment.
public struct DecodedRealtimeRequestBody: Codable, Hashable, Sendable {
    /// The original transaction ID of the subscriber's subscription.
    public var originalTransactionID: String?
    /// The App Store's numeric ID of the app.
    public var appAppleID: Int64?
    /// The product ID of the subscription.
    public var productID: String?
    /// The device's locale, such as `en-US`.
    public var userLocale: String?
    /// A UUID the App Store made for this request.
    public var requestIdentifier: String?
    /// The environment the request comes from.
    public var environment: AppStoreEnvironment?
    /// When the App Store signed the request.
    @EpochMilliseconds public var signedDate: Date?

    /// A payload from its parts.
    public init(
        originalTransactionID: String? = nil, appAppleID: Int64? = nil, productID: String? = nil,
        userLocale: String? = nil, requestIdentifier: String? = nil, environment: AppStoreEnvironment? = nil,
        signedDate: Date? = nil
    ) {
        self.originalTransactionID = originalTransactionID
        self.appAppleID = appAppleID
        self.productID = productID
        self.userLocale = userLocale
        self.requestIdentifier = requestIdentifier
        self.environment = environment
        self.signedDate = signedDate
    }

    enum CodingKeys: String, CodingKey {
        case originalTransactionID = "originalTransactionId"
        case appAppleID = "appAppleId"
        case productID = "productId"
        case userLocale
        case requestIdentifier
        case environment
        case signedDate
    }
}

extension DecodedRealtimeRequestBody: SignedPayload {
    public var signedPayloadDate: Date? { signedDate }
    /// The request names no bundle ID; the app is known by ``appAppleID``.
    public var signedPayloadBundleID: String? { nil }
    public var signedPayloadEnvironment: AppStoreEnvironment? { environment }
    public var signedPayloadAppAppleID: Int64? { appAppleID }
}
