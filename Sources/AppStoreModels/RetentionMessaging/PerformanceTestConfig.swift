/// How a performance test runs and what it takes to pass (Apple's `PerformanceTestConfig`): the
/// App Store sends `totalRequests` signed `Get Retention Message` requests, at most
/// `maxConcurrentRequests` at a time, for up to `totalDuration` milliseconds; a request succeeds
/// when it is answered 200 with a valid body within `responseTimeThreshold` milliseconds, and the
/// test passes when at least `successRateThreshold` percent succeed.
public struct PerformanceTestConfig: Codable, Hashable, Sendable {
    /// The most requests in flight at once.
    public var maxConcurrentRequests: Int?
    /// How many requests the test sends.
    public var totalRequests: Int?
    /// How long the test runs at most, in milliseconds; it ends this long after it started.
    public var totalDuration: Int64?
    /// The longest an answer may take, in milliseconds, to count as a success.
    public var responseTimeThreshold: Int64?
    /// The share of successful requests, in percent, needed to pass.
    public var successRateThreshold: Int?

    /// A configuration from its parts.
    public init(
        maxConcurrentRequests: Int? = nil, totalRequests: Int? = nil, totalDuration: Int64? = nil,
        responseTimeThreshold: Int64? = nil, successRateThreshold: Int? = nil
    ) {
        self.maxConcurrentRequests = maxConcurrentRequests
        self.totalRequests = totalRequests
        self.totalDuration = totalDuration
        self.responseTimeThreshold = responseTimeThreshold
        self.successRateThreshold = successRateThreshold
    }

    enum CodingKeys: String, CodingKey {
        case maxConcurrentRequests
        case totalRequests
        case totalDuration
        case responseTimeThreshold
        case successRateThreshold
    }
}
