/// The answer of Get Performance Test Results
/// (`GET /inApps/v1/messaging/performanceTest/result/{requestId}`): the test's configuration, the
/// URL it called, whether it passed, and what it measured (Apple's `PerformanceTestResultResponse`).
public struct PerformanceTestResultResponse: Codable, Hashable, Sendable {
    /// How the test ran.
    public var config: PerformanceTestConfig?
    /// The URL the test sent its requests to.
    public var target: String?
    /// Pending, passed or failed.
    public var result: PerformanceTestStatus?
    /// The share of requests answered correctly in time, in percent.
    public var successRate: Int?
    /// How many requests are still unanswered (or unsent).
    public var numPending: Int?
    /// The response times measured.
    public var responseTimes: PerformanceTestResponseTimes?
    /// How many requests failed, by reason (``SendAttemptResult`` raw values such as `TIMED_OUT`).
    public var failures: [String: Int]?

    /// A result from its parts.
    public init(
        config: PerformanceTestConfig? = nil, target: String? = nil, result: PerformanceTestStatus? = nil,
        successRate: Int? = nil, numPending: Int? = nil, responseTimes: PerformanceTestResponseTimes? = nil,
        failures: [String: Int]? = nil
    ) {
        self.config = config
        self.target = target
        self.result = result
        self.successRate = successRate
        self.numPending = numPending
        self.responseTimes = responseTimes
        self.failures = failures
    }

    enum CodingKeys: String, CodingKey {
        case config
        case target
        case result
        case successRate
        case numPending
        case responseTimes
        case failures
    }
}
