/// The answer of Initiate Performance Test: how the test runs and the identifier to ask for its
/// result with (Apple's `PerformanceTestResponse`).
public struct PerformanceTestResponse: Codable, Hashable, Sendable {
    /// How the test runs.
    public var config: PerformanceTestConfig?
    /// The identifier to pass to Get Performance Test Results.
    public var requestID: String?

    /// An answer from its parts.
    public init(config: PerformanceTestConfig? = nil, requestID: String? = nil) {
        self.config = config
        self.requestID = requestID
    }

    enum CodingKeys: String, CodingKey {
        case config
        case requestID = "requestId"
    }
}
