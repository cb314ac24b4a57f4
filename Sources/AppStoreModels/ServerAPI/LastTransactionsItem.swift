/// The latest transaction and renewal info of one subscription, in Get All Subscription Statuses.
public struct LastTransactionsItem: Codable, Hashable, Sendable {
    /// The state of the subscription.
    public var status: SubscriptionStatus?
    /// The ID of the first purchase of the subscription.
    public var originalTransactionID: String?
    /// The latest transaction, as a JWS whose payload is a ``JWSTransactionDecodedPayload``.
    public var signedTransactionInfo: String?
    /// The renewal info, as a JWS whose payload is a ``JWSRenewalInfoDecodedPayload``.
    public var signedRenewalInfo: String?

    /// Creates an item; every field defaults to absent.
    public init(
        status: SubscriptionStatus? = nil, originalTransactionID: String? = nil,
        signedTransactionInfo: String? = nil, signedRenewalInfo: String? = nil
    ) {
        self.status = status
        self.originalTransactionID = originalTransactionID
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }

    enum CodingKeys: String, CodingKey {
        case status
        case originalTransactionID = "originalTransactionId"
        case signedTransactionInfo
        case signedRenewalInfo
    }
}
