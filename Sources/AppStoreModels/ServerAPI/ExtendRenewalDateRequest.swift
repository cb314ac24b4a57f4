/// The body of Extend a Subscription Renewal Date: push one subscription's renewal back for free.
public struct ExtendRenewalDateRequest: Codable, Hashable, Sendable {
    /// How many days to add; Apple allows at most 90.
    public var extendByDays: Int?
    /// Why the renewal date is extended.
    public var extendReasonCode: ExtendReasonCode?
    /// A unique ID chosen by the developer, so that a repeated request is not applied twice.
    public var requestIdentifier: String?

    /// Creates a request; every field defaults to absent.
    public init(extendByDays: Int? = nil, extendReasonCode: ExtendReasonCode? = nil, requestIdentifier: String? = nil) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
    }

    enum CodingKeys: String, CodingKey {
        case extendByDays
        case extendReasonCode
        case requestIdentifier
    }
}
