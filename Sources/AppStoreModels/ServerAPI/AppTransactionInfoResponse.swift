/// The answer of Get App Transaction Info: the customer's signed app transaction.
public struct AppTransactionInfoResponse: Codable, Hashable, Sendable {
    /// The app transaction, as a JWS whose payload is an ``AppTransaction``.
    public var signedAppTransactionInfo: String?

    /// Creates a response.
    public init(signedAppTransactionInfo: String? = nil) {
        self.signedAppTransactionInfo = signedAppTransactionInfo
    }

    enum CodingKeys: String, CodingKey {
        case signedAppTransactionInfo
    }
}
