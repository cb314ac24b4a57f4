/// The decoded app receipt in a verifyReceipt response (`receipt`).
///
/// IDs that Apple sends as JSON numbers (`adam_id`, `app_item_id`, `download_id`,
/// `version_external_identifier`) are integers here and also accept strings of digits; dates come as
/// three strings each, read with the typed accessors such as ``receiptCreationDate``.
public struct VerifyReceiptReceipt: Codable, Hashable, Sendable {
    /// Which kind of receipt this is: production, sandbox, and whether bought through volume purchase.
    public var receiptType: ReceiptType?
    /// The App Store's numeric ID of the app; `0` in the sandbox.
    @FlexibleInteger public var adamID: Int64?
    /// The App Store's numeric ID of the app, as in `adam_id`; `0` in the sandbox.
    @FlexibleInteger public var appItemID: Int64?
    /// The bundle ID of the app.
    public var bundleID: String?
    /// The app version the receipt was made for (`CFBundleVersion` on iOS).
    public var applicationVersion: String?
    /// An ID of the download that installed the app.
    @FlexibleInteger public var downloadID: Int64?
    /// The App Store's ID of the app version; `0` in the sandbox.
    @FlexibleInteger public var versionExternalIdentifier: Int64?
    /// The app version the customer first got.
    public var originalApplicationVersion: String?
    /// When the receipt was created, in UTC.
    public var receiptCreationDateGMT: String?
    /// When the receipt was created, in milliseconds since 1970, as a string.
    public var receiptCreationDateMS: String?
    /// When the receipt was created, in Los Angeles time.
    public var receiptCreationDatePST: String?
    /// When verifyReceipt handled the request, in UTC.
    public var requestDateGMT: String?
    /// When verifyReceipt handled the request, in milliseconds since 1970, as a string.
    public var requestDateMS: String?
    /// When verifyReceipt handled the request, in Los Angeles time.
    public var requestDatePST: String?
    /// When the customer first got the app, in UTC.
    public var originalPurchaseDateGMT: String?
    /// When the customer first got the app, in milliseconds since 1970, as a string.
    public var originalPurchaseDateMS: String?
    /// When the customer first got the app, in Los Angeles time.
    public var originalPurchaseDatePST: String?
    /// When the customer pre-ordered the app, in UTC.
    public var preorderDateGMT: String?
    /// When the customer pre-ordered the app, in milliseconds since 1970, as a string.
    public var preorderDateMS: String?
    /// When the customer pre-ordered the app, in Los Angeles time.
    public var preorderDatePST: String?
    /// When a volume purchase receipt expires, in UTC.
    public var expirationDateGMT: String?
    /// When a volume purchase receipt expires, in milliseconds since 1970, as a string.
    public var expirationDateMS: String?
    /// When a volume purchase receipt expires, in Los Angeles time.
    public var expirationDatePST: String?
    /// The in-app purchases in the receipt.
    public var inApp: [VerifyReceiptInAppPurchase]?

    /// Creates a receipt; every field defaults to absent. Use the typed setters such as
    /// ``receiptCreationDate`` to fill the date triples.
    public init(
        receiptType: ReceiptType? = nil, adamID: Int64? = nil, appItemID: Int64? = nil, bundleID: String? = nil,
        applicationVersion: String? = nil, downloadID: Int64? = nil, versionExternalIdentifier: Int64? = nil,
        originalApplicationVersion: String? = nil, receiptCreationDateGMT: String? = nil,
        receiptCreationDateMS: String? = nil, receiptCreationDatePST: String? = nil, requestDateGMT: String? = nil,
        requestDateMS: String? = nil, requestDatePST: String? = nil, originalPurchaseDateGMT: String? = nil,
        originalPurchaseDateMS: String? = nil, originalPurchaseDatePST: String? = nil,
        preorderDateGMT: String? = nil, preorderDateMS: String? = nil, preorderDatePST: String? = nil,
        expirationDateGMT: String? = nil, expirationDateMS: String? = nil, expirationDatePST: String? = nil,
        inApp: [VerifyReceiptInAppPurchase]? = nil
    ) {
        self.receiptType = receiptType
        self.adamID = adamID
        self.appItemID = appItemID
        self.bundleID = bundleID
        self.applicationVersion = applicationVersion
        self.downloadID = downloadID
        self.versionExternalIdentifier = versionExternalIdentifier
        self.originalApplicationVersion = originalApplicationVersion
        self.receiptCreationDateGMT = receiptCreationDateGMT
        self.receiptCreationDateMS = receiptCreationDateMS
        self.receiptCreationDatePST = receiptCreationDatePST
        self.requestDateGMT = requestDateGMT
        self.requestDateMS = requestDateMS
        self.requestDatePST = requestDatePST
        self.originalPurchaseDateGMT = originalPurchaseDateGMT
        self.originalPurchaseDateMS = originalPurchaseDateMS
        self.originalPurchaseDatePST = originalPurchaseDatePST
        self.preorderDateGMT = preorderDateGMT
        self.preorderDateMS = preorderDateMS
        self.preorderDatePST = preorderDatePST
        self.expirationDateGMT = expirationDateGMT
        self.expirationDateMS = expirationDateMS
        self.expirationDatePST = expirationDatePST
        self.inApp = inApp
    }

    enum CodingKeys: String, CodingKey {
        case receiptType = "receipt_type"
        case adamID = "adam_id"
        case appItemID = "app_item_id"
        case bundleID = "bundle_id"
        case applicationVersion = "application_version"
        case downloadID = "download_id"
        case versionExternalIdentifier = "version_external_identifier"
        case originalApplicationVersion = "original_application_version"
        case receiptCreationDateGMT = "receipt_creation_date"
        case receiptCreationDateMS = "receipt_creation_date_ms"
        case receiptCreationDatePST = "receipt_creation_date_pst"
        case requestDateGMT = "request_date"
        case requestDateMS = "request_date_ms"
        case requestDatePST = "request_date_pst"
        case originalPurchaseDateGMT = "original_purchase_date"
        case originalPurchaseDateMS = "original_purchase_date_ms"
        case originalPurchaseDatePST = "original_purchase_date_pst"
        case preorderDateGMT = "preorder_date"
        case preorderDateMS = "preorder_date_ms"
        case preorderDatePST = "preorder_date_pst"
        case expirationDateGMT = "expiration_date"
        case expirationDateMS = "expiration_date_ms"
        case expirationDatePST = "expiration_date_pst"
        case inApp = "in_app"
    }
}
