public import Foundation

/// One attempt to deliver a notification to the app's server.
public struct SendAttemptItem: Codable, Hashable, Sendable {
    /// When the App Store tried.
    @EpochMilliseconds public var attemptDate: Date?
    /// How the attempt ended.
    public var sendAttemptResult: SendAttemptResult?

    /// Creates an attempt; every field defaults to absent.
    public init(attemptDate: Date? = nil, sendAttemptResult: SendAttemptResult? = nil) {
        self.attemptDate = attemptDate
        self.sendAttemptResult = sendAttemptResult
    }

    enum CodingKeys: String, CodingKey {
        case attemptDate
        case sendAttemptResult
    }
}
