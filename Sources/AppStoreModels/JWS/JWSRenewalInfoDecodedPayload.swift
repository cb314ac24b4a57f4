public import Foundation

/// The content of signed renewal info: what will happen to an auto-renewable subscription next.
///
/// Apple hands this out as the payload of a JWS in `signedRenewalInfo`. It describes the coming
/// renewal (product, price, offer) and, once the subscription has lapsed, why. It has no bundle ID.
/// Every field is optional and unknown keys are ignored, so newer payloads still decode.
public struct JWSRenewalInfoDecodedPayload: Codable, Hashable, Sendable {
    /// Why the subscription expired; present only after it expired.
    public var expirationIntent: ExpirationIntent?
    /// The ID of the first purchase of the subscription.
    public var originalTransactionID: String?
    /// The product the subscription will renew into, which may differ after an upgrade or downgrade.
    public var autoRenewProductID: String?
    /// The product the customer is subscribed to now.
    public var productID: String?
    /// Whether the subscription will renew.
    public var autoRenewStatus: AutoRenewStatus?
    /// Whether the App Store is still trying to charge the customer after a failed renewal.
    public var isInBillingRetryPeriod: Bool?
    /// Where the customer stands on a price increase.
    public var priceIncreaseStatus: PriceIncreaseStatus?
    /// When the billing grace period ends; until then the customer keeps access.
    @EpochMilliseconds public var gracePeriodExpiresDate: Date?
    /// The kind of offer that applies at the next renewal, if any.
    public var offerType: OfferType?
    /// The promotional offer ID or offer code reference name for the next renewal.
    public var offerIdentifier: String?
    /// When the App Store signed this payload.
    @EpochMilliseconds public var signedDate: Date?
    /// The environment the subscription belongs to.
    public var environment: AppStoreEnvironment?
    /// The start of the current run of the subscription, ignoring lapses shorter than 60 days.
    @EpochMilliseconds public var recentSubscriptionStartDate: Date?
    /// When the current period ends and the subscription renews or expires.
    @EpochMilliseconds public var renewalDate: Date?
    /// The currency of `renewalPrice`, as an ISO 4217 code.
    public var currency: String?
    /// The price of the next renewal in milliunits of `currency`. See ``renewalPriceAmount``.
    public var renewalPrice: Int64?
    /// How the offer that applies at the next renewal charges the customer.
    public var offerDiscountType: OfferDiscountType?
    /// The win-back offers the customer may redeem now.
    public var eligibleWinBackOfferIDs: [String]?
    /// The UUID the app attached to the purchase, as a string.
    public var appAccountToken: String?
    /// The ID of the app download transaction of this customer.
    public var appTransactionID: String?
    /// How long the offer at the next renewal lasts, as an ISO 8601 duration. See ``offerPeriodValue``.
    public var offerPeriod: String?
    /// Advanced Commerce details, kept as raw JSON because Kakin does not model that API.
    public var advancedCommerceInfo: JSONValue?
    /// What happens to a subscription commitment plan at its next renewal.
    public var commitmentInfo: RenewalCommitmentInfo?
    /// How the next renewal of a commitment plan will be billed.
    public var renewalBillingPlanType: RenewalBillingPlanType?
    /// A hash that lets the device confirm the payload was made for it; device payloads only.
    public var deviceVerification: String?
    /// The UUID mixed into ``deviceVerification``.
    public var deviceVerificationNonce: String?

    /// Creates renewal info; every field defaults to absent.
    public init(
        expirationIntent: ExpirationIntent? = nil, originalTransactionID: String? = nil,
        autoRenewProductID: String? = nil, productID: String? = nil, autoRenewStatus: AutoRenewStatus? = nil,
        isInBillingRetryPeriod: Bool? = nil, priceIncreaseStatus: PriceIncreaseStatus? = nil,
        gracePeriodExpiresDate: Date? = nil, offerType: OfferType? = nil, offerIdentifier: String? = nil,
        signedDate: Date? = nil, environment: AppStoreEnvironment? = nil, recentSubscriptionStartDate: Date? = nil,
        renewalDate: Date? = nil, currency: String? = nil, renewalPrice: Int64? = nil,
        offerDiscountType: OfferDiscountType? = nil, eligibleWinBackOfferIDs: [String]? = nil,
        appAccountToken: String? = nil, appTransactionID: String? = nil, offerPeriod: String? = nil,
        advancedCommerceInfo: JSONValue? = nil, commitmentInfo: RenewalCommitmentInfo? = nil,
        renewalBillingPlanType: RenewalBillingPlanType? = nil, deviceVerification: String? = nil,
        deviceVerificationNonce: String? = nil
    ) {
        self.expirationIntent = expirationIntent
        self.originalTransactionID = originalTransactionID
        self.autoRenewProductID = autoRenewProductID
        self.productID = productID
        self.autoRenewStatus = autoRenewStatus
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.priceIncreaseStatus = priceIncreaseStatus
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.signedDate = signedDate
        self.environment = environment
        self.recentSubscriptionStartDate = recentSubscriptionStartDate
        self.renewalDate = renewalDate
        self.currency = currency
        self.renewalPrice = renewalPrice
        self.offerDiscountType = offerDiscountType
        self.eligibleWinBackOfferIDs = eligibleWinBackOfferIDs
        self.appAccountToken = appAccountToken
        self.appTransactionID = appTransactionID
        self.offerPeriod = offerPeriod
        self.advancedCommerceInfo = advancedCommerceInfo
        self.commitmentInfo = commitmentInfo
        self.renewalBillingPlanType = renewalBillingPlanType
        self.deviceVerification = deviceVerification
        self.deviceVerificationNonce = deviceVerificationNonce
    }

    enum CodingKeys: String, CodingKey {
        case expirationIntent
        case originalTransactionID = "originalTransactionId"
        case autoRenewProductID = "autoRenewProductId"
        case productID = "productId"
        case autoRenewStatus
        case isInBillingRetryPeriod
        case priceIncreaseStatus
        case gracePeriodExpiresDate
        case offerType
        case offerIdentifier
        case signedDate
        case environment
        case recentSubscriptionStartDate
        case renewalDate
        case currency
        case renewalPrice
        case offerDiscountType
        case eligibleWinBackOfferIDs = "eligibleWinBackOfferIds"
        case appAccountToken
        case appTransactionID = "appTransactionId"
        case offerPeriod
        case advancedCommerceInfo
        case commitmentInfo
        case renewalBillingPlanType
        case deviceVerification
        case deviceVerificationNonce
    }
}

extension JWSRenewalInfoDecodedPayload: SignedPayload {
    /// ``signedDate``.
    public var signedPayloadDate: Date? { signedDate }
    /// Always `nil`: renewal info does not name the app.
    public var signedPayloadBundleID: String? { nil }
    /// ``environment``.
    public var signedPayloadEnvironment: AppStoreEnvironment? { environment }
    /// Always `nil`: renewal info does not name the app's Apple ID.
    public var signedPayloadAppAppleID: Int64? { nil }
}

extension JWSRenewalInfoDecodedPayload {
    /// ``renewalPrice`` as an amount of ``currency``: `9990` milliunits is `9.99`.
    public var renewalPriceAmount: Decimal? { renewalPrice.map(Decimal.fromMilliunits) }

    /// ``offerPeriod`` parsed, or `nil` when it is absent or not a single-unit ISO 8601 duration.
    public var offerPeriodValue: SubscriptionPeriod? { offerPeriod.flatMap(SubscriptionPeriod.init(iso8601:)) }
}
