/// The answer of Look Up Order ID: the transactions of the order on a customer's receipt email.
public struct OrderLookupResponse: Codable, Hashable, Sendable {
    /// Whether the order ID is valid.
    public var status: OrderLookupStatus?
    /// The transactions of the order, each a JWS whose payload is a ``JWSTransactionDecodedPayload``.
    public var signedTransactions: [String]?

    /// Creates a response; every field defaults to absent.
    public init(status: OrderLookupStatus? = nil, signedTransactions: [String]? = nil) {
        self.status = status
        self.signedTransactions = signedTransactions
    }

    enum CodingKeys: String, CodingKey {
        case status
        case signedTransactions
    }
}
