/// The answer of Request a Test Notification: a token to follow the notification with.
public struct SendTestNotificationResponse: Codable, Hashable, Sendable {
    /// The token to pass to Get Test Notification Status.
    public var testNotificationToken: String?

    /// Creates a response.
    public init(testNotificationToken: String? = nil) {
        self.testNotificationToken = testNotificationToken
    }

    enum CodingKeys: String, CodingKey {
        case testNotificationToken
    }
}
