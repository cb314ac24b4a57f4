public import AppStoreModels
public import KakinLedger

/// `GET /v1/retention/saves`: an app's retention answers in one environment over a range of UTC
/// days, by the message shown, with how many of those subscribers stayed, left, or have not
/// decided yet (``RetentionOutcome``, worked out when read).
public struct RetentionSavesAnswer: Codable, Sendable, Hashable {
    /// One message's counts.
    public struct Message: Codable, Sendable, Hashable {
        /// The message ID, or `default` for answers with no choice (the App Store's own message).
        public var messageId: String
        /// Answers that showed it.
        public var shown: Int
        /// Of those, subscribers who stayed.
        public var stayed: Int
        /// Of those, subscribers who left.
        public var left: Int
        /// Of those, subscribers not decided yet.
        public var pending: Int
        /// Stayed over stayed and left; `nil` while no outcome is known.
        public var saveRate: Double?

        /// The counts of `saves`.
        public init(_ saves: RetentionSaves) {
            messageId = saves.messageID
            shown = saves.shown
            stayed = saves.stayed
            left = saves.left
            pending = saves.pending
            saveRate = saves.saveRate
        }
    }

    /// The app.
    public var bundleId: String
    /// The environment.
    public var environment: String
    /// The first day (`yyyy-MM-dd`).
    public var from: String
    /// The last day (`yyyy-MM-dd`), included.
    public var to: String
    /// The messages, by message ID.
    public var messages: [Message]

    /// The answer for `saves` of `bundleID` in `environment` over the days `days`.
    public init(bundleID: String, environment: AppStoreEnvironment, days: ClosedRange<Int>, saves: [RetentionSaves]) {
        bundleId = bundleID
        self.environment = environment.rawValue
        from = MetricsReport.date(days.lowerBound)
        to = MetricsReport.date(days.upperBound)
        messages = saves.map(Message.init)
    }
}
