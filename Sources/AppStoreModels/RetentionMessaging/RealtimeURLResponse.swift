/// The answer of Get Realtime URL (`GET /inApps/v1/messaging/realtime/url`, Retention Messaging
/// API 1.4): the URL configured for the environment whose host was called (Apple's
/// `RealtimeUrlResponse`). With none configured, Apple answers 404 with
/// ``APIErrorCode/realtimeURLNotFound``.
public struct RealtimeURLResponse: Codable, Hashable, Sendable {
    /// The URL of the app's `Get Retention Message` endpoint.
    public var realtimeURL: String?

    /// An answer naming `realtimeURL`.
    public init(realtimeURL: String? = nil) {
        self.realtimeURL = realtimeURL
    }

    enum CodingKeys: String, CodingKey {
        case realtimeURL
    }
}
