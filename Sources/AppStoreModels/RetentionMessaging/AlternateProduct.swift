/// A switch-plan suggestion chosen in a real-time answer: a message without image and a
/// subscription of the same group to switch to (Apple's `alternateProduct`).
public struct AlternateProduct: Codable, Hashable, Sendable {
    /// The identifier (a UUID) of an approved message without image.
    public var messageIdentifier: String?
    /// The product ID of the suggested subscription, in the same subscription group.
    public var productID: String?

    /// A suggestion from its parts.
    public init(messageIdentifier: String? = nil, productID: String? = nil) {
        self.messageIdentifier = messageIdentifier
        self.productID = productID
    }

    enum CodingKeys: String, CodingKey {
        case messageIdentifier
        case productID = "productId"
    }
}
