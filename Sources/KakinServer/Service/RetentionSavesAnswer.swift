public import AppStoreModels
public import KakinLedger

/// `GET /v1/retention/saves`: an app's retention answers in one environment over a range of UTC
/// days, by the message shown, with how many of those subscribers stayed, left, or have not
/// decided yet (`RetentionOutcome`, worked out when read).
public struct RetentionSavesAnswer: Codable, Sendable, Hashable {
    /// The app.
    public var bundleId: String
    /// The environment.
    public var environment: String
    /// The first day (`yyyy-MM-dd`).
    public var from: String
    /// The last day (`yyyy-MM-dd`), included.
    public var to: String
    /// The messages, by message ID (`default` for answers with no choice).
    public var messages: [RetentionSaves]

    /// The answer for `saves` of `bundleID` in `environment` over the days `days`.
    public init(bundleID: String, environment: AppStoreEnvironment, days: ClosedRange<Int>, saves: [RetentionSaves]) {
        bundleId = bundleID
        self.environment = environment.rawValue
        from = MetricsReport.date(days.lowerBound)
        to = MetricsReport.date(days.upperBound)
        messages = saves
    }
}
