/// One past notification and the story of its delivery, in Get Notification History.
public struct NotificationHistoryResponseItem: Codable, Hashable, Sendable {
    /// The notification, as a JWS whose payload is a ``ResponseBodyV2DecodedPayload``.
    public var signedPayload: String?
    /// Every delivery attempt, oldest first.
    public var sendAttempts: [SendAttemptItem]?

    /// Creates an item; every field defaults to absent.
    public init(signedPayload: String? = nil, sendAttempts: [SendAttemptItem]? = nil) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }

    enum CodingKeys: String, CodingKey {
        case signedPayload
        case sendAttempts
    }
}
