/// The answer of Extend Subscription Renewal Dates for All Active Subscribers: the job was accepted.
public struct MassExtendRenewalDateResponse: Codable, Hashable, Sendable {
    /// The ID of the job, as given in the request.
    public var requestIdentifier: String?

    /// Creates a response.
    public init(requestIdentifier: String? = nil) {
        self.requestIdentifier = requestIdentifier
    }

    enum CodingKeys: String, CodingKey {
        case requestIdentifier
    }
}
