/// The body of Configure Default Message (`PUT /inApps/v1/messaging/default/{productId}/{locale}`):
/// the message shown for a product in a locale when the app's `Get Retention Message` endpoint does
/// not answer in time, or when the app has none (Apple's `DefaultConfigurationRequest`).
///
/// Only an approved text message, with or without an image, can be a default.
public struct DefaultConfigurationRequest: Codable, Hashable, Sendable {
    /// The identifier (a UUID) of the message.
    public var messageIdentifier: String?

    /// A configuration naming `messageIdentifier`.
    public init(messageIdentifier: String? = nil) {
        self.messageIdentifier = messageIdentifier
    }

    enum CodingKeys: String, CodingKey {
        case messageIdentifier
    }
}
