/// The body of Configure Realtime URL (`PUT /inApps/v1/messaging/realtime/url`, Retention Messaging
/// API 1.4): where the App Store sends `Get Retention Message` requests in the environment whose
/// host is called (Apple's `RealtimeUrlRequest`).
///
/// A production URL is accepted only after the app passed a performance test in the sandbox
/// environment (``APIErrorCode/noPassingPerformanceTest`` otherwise).
public struct RealtimeURLRequest: Codable, Hashable, Sendable {
    /// The HTTPS URL of the app's `Get Retention Message` endpoint.
    public var realtimeURL: String

    /// A request configuring `realtimeURL`.
    public init(realtimeURL: String) {
        self.realtimeURL = realtimeURL
    }

    enum CodingKeys: String, CodingKey {
        case realtimeURL
    }
}
