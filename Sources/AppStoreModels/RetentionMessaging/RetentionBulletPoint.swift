/// One bullet point of a message: its text and the icon drawn beside it (Apple's `BulletPoint`,
/// Retention Messaging API 1.4).
public struct RetentionBulletPoint: Codable, Hashable, Sendable {
    /// The text; at most 66 characters.
    public var text: String
    /// The identifier (a UUID) of the icon, uploaded with image size `BULLET_POINT`.
    public var imageIdentifier: String
    /// What the icon shows; at most 150 characters.
    public var altText: String

    /// A bullet point from its parts.
    public init(text: String, imageIdentifier: String, altText: String) {
        self.text = text
        self.imageIdentifier = imageIdentifier
        self.altText = altText
    }

    enum CodingKeys: String, CodingKey {
        case text
        case imageIdentifier
        case altText
    }
}
