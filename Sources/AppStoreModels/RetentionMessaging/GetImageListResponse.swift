/// The answer of Get Image List (`GET /inApps/v1/messaging/image/list`): every image the app
/// uploaded, with its review state (Apple's `GetImageListResponse`).
public struct GetImageListResponse: Codable, Hashable, Sendable {
    /// The images.
    public var imageIdentifiers: [GetImageListResponseItem]?

    /// A list from its items.
    public init(imageIdentifiers: [GetImageListResponseItem]? = nil) {
        self.imageIdentifiers = imageIdentifiers
    }

    enum CodingKeys: String, CodingKey {
        case imageIdentifiers
    }
}
