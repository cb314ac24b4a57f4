/// The body of Initiate Performance Test (`POST /inApps/v1/messaging/performanceTest`, Retention
/// Messaging API 1.3): the subscription whose requests the test sends (Apple's
/// `PerformanceTestRequest`). The test runs only in the sandbox environment.
public struct PerformanceTestRequest: Codable, Hashable, Sendable {
    /// The original transaction ID of a sandbox subscription.
    public var originalTransactionID: String

    /// A request for a test with `originalTransactionID`'s subscription.
    public init(originalTransactionID: String) {
        self.originalTransactionID = originalTransactionID
    }

    enum CodingKeys: String, CodingKey {
        case originalTransactionID = "originalTransactionId"
    }
}
