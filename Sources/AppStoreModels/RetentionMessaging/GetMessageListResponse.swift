/// The answer of Get Message List (`GET /inApps/v1/messaging/message/list`): every message the app
/// uploaded, with its review state (Apple's `GetMessageListResponse`).
public struct GetMessageListResponse: Codable, Hashable, Sendable {
    /// The messages.
    public var messageIdentifiers: [GetMessageListResponseItem]?

    /// A list from its items.
    public init(messageIdentifiers: [GetMessageListResponseItem]? = nil) {
        self.messageIdentifiers = messageIdentifiers
    }

    enum CodingKeys: String, CodingKey {
        case messageIdentifiers
    }
}
