/// One uploaded message and where Apple's review of it stands (Apple's `GetMessageListResponseItem`).
public struct GetMessageListResponseItem: Codable, Hashable, Sendable {
    /// The identifier (a UUID) the message was uploaded under.
    public var messageIdentifier: String?
    /// Pending, approved or rejected.
    public var messageState: RetentionReviewState?

    /// An item from its parts.
    public init(messageIdentifier: String? = nil, messageState: RetentionReviewState? = nil) {
        self.messageIdentifier = messageIdentifier
        self.messageState = messageState
    }

    enum CodingKeys: String, CodingKey {
        case messageIdentifier
        case messageState
    }
}
