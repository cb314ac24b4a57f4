/// The body of Upload Message (`PUT /inApps/v1/messaging/message/{messageIdentifier}`): the text of
/// a retention message and, for a text message with an image, the image (Apple's
/// `UploadMessageRequestBody`).
///
/// Messages meant for a switch plan or a promotional offer carry no image. The limits are in
/// ``RetentionMessaging``; Apple refuses a longer header with ``APIErrorCode/headerTooLong`` and a
/// longer body with ``APIErrorCode/bodyTooLong``.
public struct UploadMessageRequestBody: Codable, Hashable, Sendable {
    /// The line shown above the body (or above the image); at most 66 characters.
    public var header: String
    /// The message itself; at most 144 characters.
    public var body: String
    /// The image shown with the message, if any.
    public var image: UploadMessageImage?
    /// Where the header goes; Apple's default when absent.
    public var headerPosition: RetentionHeaderPosition?
    /// Up to five bullet points under the body.
    public var bulletPoints: [RetentionBulletPoint]?

    /// A message from its parts; only the header and the body are required.
    public init(
        header: String, body: String, image: UploadMessageImage? = nil, headerPosition: RetentionHeaderPosition? = nil,
        bulletPoints: [RetentionBulletPoint]? = nil
    ) {
        self.header = header
        self.body = body
        self.image = image
        self.headerPosition = headerPosition
        self.bulletPoints = bulletPoints
    }

    enum CodingKeys: String, CodingKey {
        case header
        case body
        case image
        case headerPosition
        case bulletPoints
    }
}
