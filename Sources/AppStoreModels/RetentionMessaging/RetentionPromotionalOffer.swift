/// A promotional offer chosen in a real-time answer: a message without image and the offer signed
/// by the app's server, in one of two formats (Apple's `promotionalOffer`).
public struct RetentionPromotionalOffer: Codable, Hashable, Sendable {
    /// The identifier (a UUID) of an approved message without image.
    public var messageIdentifier: String?
    /// The offer as a signed JWS (the newer format, simpler to make); exclusive with
    /// ``promotionalOfferSignatureV1``.
    public var promotionalOfferSignatureV2: String?
    /// The offer signed the original way; exclusive with ``promotionalOfferSignatureV2``.
    public var promotionalOfferSignatureV1: PromotionalOfferSignatureV1?

    /// An offer from its parts.
    public init(
        messageIdentifier: String? = nil, promotionalOfferSignatureV2: String? = nil,
        promotionalOfferSignatureV1: PromotionalOfferSignatureV1? = nil
    ) {
        self.messageIdentifier = messageIdentifier
        self.promotionalOfferSignatureV2 = promotionalOfferSignatureV2
        self.promotionalOfferSignatureV1 = promotionalOfferSignatureV1
    }

    enum CodingKeys: String, CodingKey {
        case messageIdentifier
        case promotionalOfferSignatureV2
        case promotionalOfferSignatureV1
    }
}
