/// The image a message shows, by the identifier it was uploaded under, with its alternative text
/// (Apple's `UploadMessageImage`).
public struct UploadMessageImage: Codable, Hashable, Sendable {
    /// The identifier (a UUID) the image was uploaded under with Upload Image.
    public var imageIdentifier: String
    /// What the image shows, read aloud by VoiceOver; at most 150 characters.
    public var altText: String

    /// An image reference from its parts.
    public init(imageIdentifier: String, altText: String) {
        self.imageIdentifier = imageIdentifier
        self.altText = altText
    }

    enum CodingKeys: String, CodingKey {
        case imageIdentifier
        case altText
    }
}
