/// The answer of the legacy verifyReceipt endpoint.
///
/// Check ``status`` first: the endpoint answers HTTP 200 even when it rejects the receipt.
public struct VerifyReceiptResponse: Codable, Hashable, Sendable {
    /// `0` when the receipt is valid, otherwise what went wrong.
    public var status: VerifyReceiptStatus?
    /// The environment the receipt belongs to.
    public var environment: AppStoreEnvironment?
    /// The decoded receipt that was sent.
    public var receipt: VerifyReceiptReceipt?
    /// The latest receipt, base64-encoded; only for receipts with auto-renewable subscriptions.
    public var latestReceipt: String?
    /// Every transaction of the latest receipt, subscriptions' renewals included.
    public var latestReceiptInfo: [VerifyReceiptInAppPurchase]?
    /// What will happen to each auto-renewable subscription next.
    public var pendingRenewalInfo: [PendingRenewalInfo]?
    /// For statuses 21100–21199: whether the same request may succeed later. Apple writes it as a
    /// Boolean or as `0`/`1`; both decode.
    @FlexibleBool public var isRetryable: Bool?

    /// Creates a response; every field defaults to absent.
    public init(
        status: VerifyReceiptStatus? = nil, environment: AppStoreEnvironment? = nil,
        receipt: VerifyReceiptReceipt? = nil, latestReceipt: String? = nil,
        latestReceiptInfo: [VerifyReceiptInAppPurchase]? = nil, pendingRenewalInfo: [PendingRenewalInfo]? = nil,
        isRetryable: Bool? = nil
    ) {
        self.status = status
        self.environment = environment
        self.receipt = receipt
        self.latestReceipt = latestReceipt
        self.latestReceiptInfo = latestReceiptInfo
        self.pendingRenewalInfo = pendingRenewalInfo
        self.isRetryable = isRetryable
    }

    enum CodingKeys: String, CodingKey {
        case status
        case environment
        case receipt
        case latestReceipt = "latest_receipt"
        case latestReceiptInfo = "latest_receipt_info"
        case pendingRenewalInfo = "pending_renewal_info"
        case isRetryable = "is-retryable"
    }
}
