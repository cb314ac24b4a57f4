/// One uploaded image, what it is for and where Apple's review of it stands (Apple's
/// `GetImageListResponseItem`).
public struct GetImageListResponseItem: Codable, Hashable, Sendable {
    /// The identifier (a UUID) the image was uploaded under.
    public var imageIdentifier: String?
    /// Pending, approved or rejected.
    public var imageState: RetentionReviewState?
    /// A message's image or a bullet point's icon.
    public var imageSize: RetentionImageSize?

    /// An item from its parts.
    public init(
        imageIdentifier: String? = nil, imageState: RetentionReviewState? = nil, imageSize: RetentionImageSize? = nil
    ) {
        self.imageIdentifier = imageIdentifier
        self.imageState = imageState
        self.imageSize = imageSize
    }

    enum CodingKeys: String, CodingKey {
        case imageIdentifier
        case imageState
        case imageSize
    }
}
