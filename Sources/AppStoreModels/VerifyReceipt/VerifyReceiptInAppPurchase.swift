/// One purchase in a verifyReceipt response, as listed in `in_app` and `latest_receipt_info`.
///
/// Apple sends numbers and Booleans here as strings and every date as three strings; the stored
/// properties keep them exactly as sent, and the accessors in the `+Values` extension read them as
/// typed values (``purchaseDate``, ``quantityValue``, ``isTrialPeriodValue``, …).
public struct VerifyReceiptInAppPurchase: Codable, Hashable, Sendable {
    /// How many units were bought, as a string such as `"1"`.
    public var quantity: String?
    /// The product ID.
    public var productID: String?
    /// The ID of this transaction.
    public var transactionID: String?
    /// The ID of the first purchase of this product.
    public var originalTransactionID: String?
    /// The ID of one subscription billing period.
    public var webOrderLineItemID: String?
    /// The purchase date in UTC (`purchase_date`).
    public var purchaseDateGMT: String?
    /// The purchase date in milliseconds since 1970, as a string (`purchase_date_ms`).
    public var purchaseDateMS: String?
    /// The purchase date in Los Angeles time (`purchase_date_pst`).
    public var purchaseDatePST: String?
    /// The original purchase date in UTC.
    public var originalPurchaseDateGMT: String?
    /// The original purchase date in milliseconds since 1970, as a string.
    public var originalPurchaseDateMS: String?
    /// The original purchase date in Los Angeles time.
    public var originalPurchaseDatePST: String?
    /// The subscription's expiry in UTC.
    public var expiresDateGMT: String?
    /// The subscription's expiry in milliseconds since 1970, as a string.
    public var expiresDateMS: String?
    /// The subscription's expiry in Los Angeles time.
    public var expiresDatePST: String?
    /// When Apple refunded the purchase, in UTC.
    public var cancellationDateGMT: String?
    /// When Apple refunded the purchase, in milliseconds since 1970, as a string.
    public var cancellationDateMS: String?
    /// When Apple refunded the purchase, in Los Angeles time.
    public var cancellationDatePST: String?
    /// Why Apple refunded the purchase: `"1"` for a problem with the app, `"0"` for anything else.
    public var cancellationReason: String?
    /// `"true"` when the purchase is in a free trial.
    public var isTrialPeriod: String?
    /// `"true"` when the purchase is in an introductory offer period.
    public var isInIntroOfferPeriod: String?
    /// `"true"` when the customer upgraded away from this subscription.
    public var isUpgraded: String?
    /// The ID of the promotional offer the customer redeemed.
    public var promotionalOfferID: String?
    /// The reference name of the offer code the customer redeemed.
    public var offerCodeRefName: String?
    /// The subscription group of the product.
    public var subscriptionGroupIdentifier: String?
    /// Whether the customer bought the product or has it through Family Sharing.
    public var inAppOwnershipType: InAppOwnershipType?
    /// The UUID the app attached to the purchase, as a string.
    public var appAccountToken: String?

    /// Creates a purchase; every field defaults to absent. Use the typed setters such as
    /// ``purchaseDate`` to fill the date triples.
    public init(
        quantity: String? = nil, productID: String? = nil, transactionID: String? = nil,
        originalTransactionID: String? = nil, webOrderLineItemID: String? = nil, purchaseDateGMT: String? = nil,
        purchaseDateMS: String? = nil, purchaseDatePST: String? = nil, originalPurchaseDateGMT: String? = nil,
        originalPurchaseDateMS: String? = nil, originalPurchaseDatePST: String? = nil,
        expiresDateGMT: String? = nil, expiresDateMS: String? = nil, expiresDatePST: String? = nil,
        cancellationDateGMT: String? = nil, cancellationDateMS: String? = nil, cancellationDatePST: String? = nil,
        cancellationReason: String? = nil, isTrialPeriod: String? = nil, isInIntroOfferPeriod: String? = nil,
        isUpgraded: String? = nil, promotionalOfferID: String? = nil, offerCodeRefName: String? = nil,
        subscriptionGroupIdentifier: String? = nil, inAppOwnershipType: InAppOwnershipType? = nil,
        appAccountToken: String? = nil
    ) {
        self.quantity = quantity
        self.productID = productID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.webOrderLineItemID = webOrderLineItemID
        self.purchaseDateGMT = purchaseDateGMT
        self.purchaseDateMS = purchaseDateMS
        self.purchaseDatePST = purchaseDatePST
        self.originalPurchaseDateGMT = originalPurchaseDateGMT
        self.originalPurchaseDateMS = originalPurchaseDateMS
        self.originalPurchaseDatePST = originalPurchaseDatePST
        self.expiresDateGMT = expiresDateGMT
        self.expiresDateMS = expiresDateMS
        self.expiresDatePST = expiresDatePST
        self.cancellationDateGMT = cancellationDateGMT
        self.cancellationDateMS = cancellationDateMS
        self.cancellationDatePST = cancellationDatePST
        self.cancellationReason = cancellationReason
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.isUpgraded = isUpgraded
        self.promotionalOfferID = promotionalOfferID
        self.offerCodeRefName = offerCodeRefName
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.inAppOwnershipType = inAppOwnershipType
        self.appAccountToken = appAccountToken
    }

    enum CodingKeys: String, CodingKey {
        case quantity
        case productID = "product_id"
        case transactionID = "transaction_id"
        case originalTransactionID = "original_transaction_id"
        case webOrderLineItemID = "web_order_line_item_id"
        case purchaseDateGMT = "purchase_date"
        case purchaseDateMS = "purchase_date_ms"
        case purchaseDatePST = "purchase_date_pst"
        case originalPurchaseDateGMT = "original_purchase_date"
        case originalPurchaseDateMS = "original_purchase_date_ms"
        case originalPurchaseDatePST = "original_purchase_date_pst"
        case expiresDateGMT = "expires_date"
        case expiresDateMS = "expires_date_ms"
        case expiresDatePST = "expires_date_pst"
        case cancellationDateGMT = "cancellation_date"
        case cancellationDateMS = "cancellation_date_ms"
        case cancellationDatePST = "cancellation_date_pst"
        case cancellationReason = "cancellation_reason"
        case isTrialPeriod = "is_trial_period"
        case isInIntroOfferPeriod = "is_in_intro_offer_period"
        case isUpgraded = "is_upgraded"
        case promotionalOfferID = "promotional_offer_id"
        case offerCodeRefName = "offer_code_ref_name"
        case subscriptionGroupIdentifier = "subscription_group_identifier"
        case inAppOwnershipType = "in_app_ownership_type"
        case appAccountToken = "app_account_token"
    }
}
