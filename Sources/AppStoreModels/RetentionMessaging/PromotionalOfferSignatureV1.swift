/// A promotional offer signed the original way (Apple's `promotionalOfferSignatureV1`): the fields
/// StoreKit's `Product.PurchaseOption.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`
/// takes, with the signature base64-encoded.
public struct PromotionalOfferSignatureV1: Codable, Hashable, Sendable {
    /// The ECDSA signature over the offer's fields, base64.
    public var encodedSignature: String
    /// The product the offer is for.
    public var productID: String
    /// The nonce (a UUID) that was signed.
    public var nonce: String
    /// When it was signed, in UNIX milliseconds.
    public var timestamp: Int64
    /// The ID of the subscription key that signed.
    public var keyID: String
    /// The offer's identifier in App Store Connect.
    public var offerIdentifier: String
    /// The app account token that was signed, if one was.
    public var appAccountToken: String?

    /// A signature from its parts.
    public init(
        encodedSignature: String, productID: String, nonce: String, timestamp: Int64, keyID: String,
        offerIdentifier: String, appAccountToken: String? = nil
    ) {
        self.encodedSignature = encodedSignature
        self.productID = productID
        self.nonce = nonce
        self.timestamp = timestamp
        self.keyID = keyID
        self.offerIdentifier = offerIdentifier
        self.appAccountToken = appAccountToken
    }

    enum CodingKeys: String, CodingKey {
        case encodedSignature
        case productID = "productId"
        case nonce
        case timestamp
        case keyID = "keyId"
        case offerIdentifier
        case appAccountToken
    }
}
