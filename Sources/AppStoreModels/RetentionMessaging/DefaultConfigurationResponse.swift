/// The answer of Get Default Message (`GET /inApps/v1/messaging/default/{productId}/{locale}`,
/// Retention Messaging API 1.4): the message configured for the product and locale (Apple's
/// `DefaultConfigurationResponse`).
public struct DefaultConfigurationResponse: Codable, Hashable, Sendable {
    /// The identifier (a UUID) of the default message.
    public var messageIdentifier: String?

    /// An answer naming `messageIdentifier`.
    public init(messageIdentifier: String? = nil) {
        self.messageIdentifier = messageIdentifier
    }

    enum CodingKeys: String, CodingKey {
        case messageIdentifier
    }
}
