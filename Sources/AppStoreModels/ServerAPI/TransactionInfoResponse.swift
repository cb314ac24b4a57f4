/// The answer of Get Transaction Info: one signed transaction.
public struct TransactionInfoResponse: Codable, Hashable, Sendable {
    /// The transaction, as a JWS whose payload is a ``JWSTransactionDecodedPayload``.
    public var signedTransactionInfo: String?

    /// Creates a response.
    public init(signedTransactionInfo: String? = nil) {
        self.signedTransactionInfo = signedTransactionInfo
    }

    enum CodingKeys: String, CodingKey {
        case signedTransactionInfo
    }
}
