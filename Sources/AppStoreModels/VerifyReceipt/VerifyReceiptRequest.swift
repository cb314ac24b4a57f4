/// The body POSTed to the legacy verifyReceipt endpoint.
public struct VerifyReceiptRequest: Codable, Hashable, Sendable {
    /// The app receipt, base64-encoded.
    public var receiptData: String?
    /// The app's shared secret; needed for receipts with auto-renewable subscriptions.
    public var password: String?
    /// Whether to return only the latest transaction of each subscription in `latest_receipt_info`.
    public var excludeOldTransactions: Bool?

    /// Creates a request; every field defaults to absent.
    public init(receiptData: String? = nil, password: String? = nil, excludeOldTransactions: Bool? = nil) {
        self.receiptData = receiptData
        self.password = password
        self.excludeOldTransactions = excludeOldTransactions
    }

    enum CodingKeys: String, CodingKey {
        case receiptData = "receipt-data"
        case password
        case excludeOldTransactions = "exclude-old-transactions"
    }
}
