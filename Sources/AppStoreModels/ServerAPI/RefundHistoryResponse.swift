/// One page of Get Refund History: up to 20 refunded transactions of a customer.
public struct RefundHistoryResponse: Codable, Hashable, Sendable {
    /// The refunded transactions, each a JWS whose payload is a ``JWSTransactionDecodedPayload``.
    public var signedTransactions: [String]?
    /// The token to pass as `revision` to fetch the next page.
    public var revision: String?
    /// Whether more pages follow.
    public var hasMore: Bool?

    /// Creates a page; every field defaults to absent.
    public init(signedTransactions: [String]? = nil, revision: String? = nil, hasMore: Bool? = nil) {
        self.signedTransactions = signedTransactions
        self.revision = revision
        self.hasMore = hasMore
    }

    enum CodingKeys: String, CodingKey {
        case signedTransactions
        case revision
        case hasMore
    }
}
