/// One page of Get Transaction History: up to 20 signed transactions of a customer.
public struct HistoryResponse: Codable, Hashable, Sendable {
    /// The token to pass as `revision` to fetch the next page.
    public var revision: String?
    /// Whether more pages follow.
    public var hasMore: Bool?
    /// The bundle ID of the app.
    public var bundleID: String?
    /// The App Store's numeric ID of the app.
    public var appAppleID: Int64?
    /// The environment the transactions come from.
    public var environment: AppStoreEnvironment?
    /// The transactions, each a JWS whose payload is a ``JWSTransactionDecodedPayload``.
    public var signedTransactions: [String]?

    /// Creates a page; every field defaults to absent.
    public init(
        revision: String? = nil, hasMore: Bool? = nil, bundleID: String? = nil, appAppleID: Int64? = nil,
        environment: AppStoreEnvironment? = nil, signedTransactions: [String]? = nil
    ) {
        self.revision = revision
        self.hasMore = hasMore
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.environment = environment
        self.signedTransactions = signedTransactions
    }

    enum CodingKeys: String, CodingKey {
        case revision
        case hasMore
        case bundleID = "bundleId"
        case appAppleID = "appAppleId"
        case environment
        case signedTransactions
    }
}
