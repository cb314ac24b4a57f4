public import Foundation

/// What will happen next to one auto-renewable subscription, in a verifyReceipt response.
///
/// Like the rest of verifyReceipt, numbers and Booleans are strings; the `…Value` accessors read them.
public struct PendingRenewalInfo: Codable, Hashable, Sendable {
    /// The product the subscription will renew into.
    public var autoRenewProductID: String?
    /// `"1"` when the subscription will renew, `"0"` when the customer turned renewal off.
    public var autoRenewStatus: String?
    /// Why the subscription expired, as a string of ``ExpirationIntent``'s number.
    public var expirationIntent: String?
    /// `"1"` while the App Store is still trying to charge after a failed renewal.
    public var isInBillingRetryPeriod: String?
    /// The ID of the first purchase of the subscription.
    public var originalTransactionID: String?
    /// The product the customer is subscribed to now.
    public var productID: String?
    /// `"1"` when the customer accepted a price increase, `"0"` when they have not yet.
    public var priceConsentStatus: String?
    /// Where the customer stands on a price increase, as a string of ``PriceIncreaseStatus``'s number.
    public var priceIncreaseStatus: String?
    /// The reference name of the offer code that applies at renewal.
    public var offerCodeRefName: String?
    /// The promotional offer that applies at renewal.
    public var promotionalOfferID: String?
    /// When the billing grace period ends, in UTC.
    public var gracePeriodExpiresDateGMT: String?
    /// When the billing grace period ends, in milliseconds since 1970, as a string.
    public var gracePeriodExpiresDateMS: String?
    /// When the billing grace period ends, in Los Angeles time.
    public var gracePeriodExpiresDatePST: String?

    /// Creates renewal info; every field defaults to absent.
    public init(
        autoRenewProductID: String? = nil, autoRenewStatus: String? = nil, expirationIntent: String? = nil,
        isInBillingRetryPeriod: String? = nil, originalTransactionID: String? = nil, productID: String? = nil,
        priceConsentStatus: String? = nil, priceIncreaseStatus: String? = nil, offerCodeRefName: String? = nil,
        promotionalOfferID: String? = nil, gracePeriodExpiresDateGMT: String? = nil,
        gracePeriodExpiresDateMS: String? = nil, gracePeriodExpiresDatePST: String? = nil
    ) {
        self.autoRenewProductID = autoRenewProductID
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.priceConsentStatus = priceConsentStatus
        self.priceIncreaseStatus = priceIncreaseStatus
        self.offerCodeRefName = offerCodeRefName
        self.promotionalOfferID = promotionalOfferID
        self.gracePeriodExpiresDateGMT = gracePeriodExpiresDateGMT
        self.gracePeriodExpiresDateMS = gracePeriodExpiresDateMS
        self.gracePeriodExpiresDatePST = gracePeriodExpiresDatePST
    }

    enum CodingKeys: String, CodingKey {
        case autoRenewProductID = "auto_renew_product_id"
        case autoRenewStatus = "auto_renew_status"
        case expirationIntent = "expiration_intent"
        case isInBillingRetryPeriod = "is_in_billing_retry_period"
        case originalTransactionID = "original_transaction_id"
        case productID = "product_id"
        case priceConsentStatus = "price_consent_status"
        case priceIncreaseStatus = "price_increase_status"
        case offerCodeRefName = "offer_code_ref_name"
        case promotionalOfferID = "promotional_offer_id"
        case gracePeriodExpiresDateGMT = "grace_period_expires_date"
        case gracePeriodExpiresDateMS = "grace_period_expires_date_ms"
        case gracePeriodExpiresDatePST = "grace_period_expires_date_pst"
    }
}

extension PendingRenewalInfo {
    /// ``autoRenewStatus`` read as a number.
    public var autoRenewStatusValue: AutoRenewStatus? {
        autoRenewStatus.flatMap { Int($0) }.map(AutoRenewStatus.init(rawValue:))
    }

    /// ``expirationIntent`` read as a number.
    public var expirationIntentValue: ExpirationIntent? {
        expirationIntent.flatMap { Int($0) }.map(ExpirationIntent.init(rawValue:))
    }

    /// ``isInBillingRetryPeriod`` as a Boolean.
    public var isInBillingRetryPeriodValue: Bool? { isInBillingRetryPeriod.flatMap(FlexibleBool.parse) }

    /// ``priceConsentStatus`` as a Boolean: whether the customer accepted a price increase.
    public var priceConsentStatusValue: Bool? { priceConsentStatus.flatMap(FlexibleBool.parse) }

    /// ``priceIncreaseStatus`` read as a number.
    public var priceIncreaseStatusValue: PriceIncreaseStatus? {
        priceIncreaseStatus.flatMap { Int($0) }.map(PriceIncreaseStatus.init(rawValue:))
    }

    /// When the billing grace period ends; setting it fills all three `grace_period_expires_date` keys.
    public var gracePeriodExpiresDate: Date? {
        get { VerifyReceiptDate.date(milliseconds: gracePeriodExpiresDateMS, gmt: gracePeriodExpiresDateGMT) }
        set {
            (gracePeriodExpiresDateGMT, gracePeriodExpiresDateMS, gracePeriodExpiresDatePST) =
                VerifyReceiptDate.fields(newValue)
        }
    }
}
