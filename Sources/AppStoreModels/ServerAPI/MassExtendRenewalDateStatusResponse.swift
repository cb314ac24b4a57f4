public import Foundation

/// The answer of Get Status of Subscription Renewal Date Extensions: how far a mass extension got.
public struct MassExtendRenewalDateStatusResponse: Codable, Hashable, Sendable {
    /// The ID of the job.
    public var requestIdentifier: String?
    /// Whether the job has finished.
    public var complete: Bool?
    /// When the job finished.
    @EpochMilliseconds public var completeDate: Date?
    /// How many subscriptions were extended so far.
    public var succeededCount: Int64?
    /// How many subscriptions could not be extended.
    public var failedCount: Int64?

    /// Creates a response; every field defaults to absent.
    public init(
        requestIdentifier: String? = nil, complete: Bool? = nil, completeDate: Date? = nil,
        succeededCount: Int64? = nil, failedCount: Int64? = nil
    ) {
        self.requestIdentifier = requestIdentifier
        self.complete = complete
        self.completeDate = completeDate
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }

    enum CodingKeys: String, CodingKey {
        case requestIdentifier
        case complete
        case completeDate
        case succeededCount
        case failedCount
    }
}
