/// A text message, with or without an image, chosen in a real-time answer (Apple's `message`).
public struct RetentionMessageChoice: Codable, Hashable, Sendable {
    /// The identifier (a UUID) of an approved message.
    public var messageIdentifier: String?

    /// A choice of `messageIdentifier`.
    public init(messageIdentifier: String? = nil) {
        self.messageIdentifier = messageIdentifier
    }

    enum CodingKeys: String, CodingKey {
        case messageIdentifier
    }
}
