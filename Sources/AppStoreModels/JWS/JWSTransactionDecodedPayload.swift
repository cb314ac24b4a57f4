public import Foundation

/// The content of a signed transaction: one purchase, renewal or restore, as the App Store signs it.
///
/// Apple hands this out as the payload of a JWS in `signedTransactionInfo`, `signedTransactions` and
/// StoreKit 2's `Transaction.jsonRepresentation`. Every field is optional because Apple leaves out
/// what does not apply (a consumable has no `expiresDate`), and keys this version does not know are
/// ignored, so newer payloads still decode.
public struct JWSTransactionDecodedPayload: Codable, Hashable, Sendable {
    /// The ID of this transaction; each purchase, renewal and restore gets a new one.
    public var transactionID: String?
    /// The ID of the first purchase of this product, shared by all its renewals and restores.
    public var originalTransactionID: String?
    /// The ID of one subscription billing period, the same on every device that sees it.
    public var webOrderLineItemID: String?
    /// The bundle ID of the app.
    public var bundleID: String?
    /// The product ID the customer bought.
    public var productID: String?
    /// The subscription group the product belongs to; subscriptions only.
    public var subscriptionGroupIdentifier: String?
    /// When the App Store charged the customer, or when a lapsed subscription resumed.
    @EpochMilliseconds public var purchaseDate: Date?
    /// When the original transaction (`originalTransactionID`) was made.
    @EpochMilliseconds public var originalPurchaseDate: Date?
    /// When the subscription expires or renews; subscriptions only.
    @EpochMilliseconds public var expiresDate: Date?
    /// How many units of a consumable the customer bought.
    public var quantity: Int?
    /// The kind of product.
    public var type: ProductType?
    /// The UUID the app attached to the purchase to link it to its own account, as a string.
    public var appAccountToken: String?
    /// Whether the customer bought the product or has it through Family Sharing.
    public var inAppOwnershipType: InAppOwnershipType?
    /// When the App Store signed this payload.
    @EpochMilliseconds public var signedDate: Date?
    /// Why the App Store refunded the transaction; present only after a refund or revocation.
    public var revocationReason: RevocationReason?
    /// When the App Store refunded or revoked the transaction.
    @EpochMilliseconds public var revocationDate: Date?
    /// Whether the customer upgraded to another subscription, which ends this one early.
    public var isUpgraded: Bool?
    /// Which kind of offer the customer redeemed, if any.
    public var offerType: OfferType?
    /// The promotional offer ID or the offer code reference name of the redeemed offer.
    public var offerIdentifier: String?
    /// The environment the transaction happened in.
    public var environment: AppStoreEnvironment?
    /// The storefront's country as an ISO 3166-1 alpha-3 code, such as `USA`.
    public var storefront: String?
    /// Apple's ID of the storefront, such as `143441` for the United States.
    public var storefrontID: String?
    /// Whether the customer bought the product or a subscription renewed.
    public var transactionReason: TransactionReason?
    /// The currency of `price`, as an ISO 4217 code.
    public var currency: String?
    /// The price in milliunits of `currency`: `10990` means 10.99. See ``priceAmount``.
    public var price: Int64?
    /// How the redeemed offer charges the customer.
    public var offerDiscountType: OfferDiscountType?
    /// The ID of the app download transaction of the customer who made this purchase.
    public var appTransactionID: String?
    /// How long the redeemed offer lasts, as an ISO 8601 duration such as `P1Y`. See ``offerPeriodValue``.
    public var offerPeriod: String?
    /// How much of the transaction was taken back: all of it (`REFUND_FULL`), a share of it
    /// (`REFUND_PRORATED`, see ``revocationPercentage``), or access ended by family sharing.
    public var revocationType: RevocationType?
    /// The refunded share of the transaction in milliunits of a percent: `50000` means 50 %,
    /// `100000` the whole transaction. Present on refunded transactions; absent once a refund is
    /// reversed.
    public var revocationPercentage: Int?
    /// Advanced Commerce details, kept as raw JSON because Kakin does not model that API.
    public var advancedCommerceInfo: JSONValue?
    /// How a subscription commitment plan is billed.
    public var billingPlanType: BillingPlanType?
    /// Where this transaction stands within a subscription commitment plan.
    public var commitmentInfo: TransactionCommitmentInfo?
    /// A hash that lets the device that made the purchase confirm the transaction was made for it;
    /// present only in payloads signed for a device.
    public var deviceVerification: String?
    /// The UUID mixed into ``deviceVerification``.
    public var deviceVerificationNonce: String?
    /// Advanced Commerce: the original transaction ID of the In-App Purchase subscription this
    /// one was migrated from (in the transaction of a `MIGRATION` notification).
    public var previousOriginalTransactionID: String?

    /// Creates a transaction payload; every field defaults to absent.
    public init(
        transactionID: String? = nil, originalTransactionID: String? = nil, webOrderLineItemID: String? = nil,
        bundleID: String? = nil, productID: String? = nil, subscriptionGroupIdentifier: String? = nil,
        purchaseDate: Date? = nil, originalPurchaseDate: Date? = nil, expiresDate: Date? = nil,
        quantity: Int? = nil, type: ProductType? = nil, appAccountToken: String? = nil,
        inAppOwnershipType: InAppOwnershipType? = nil, signedDate: Date? = nil,
        revocationReason: RevocationReason? = nil, revocationDate: Date? = nil, isUpgraded: Bool? = nil,
        offerType: OfferType? = nil, offerIdentifier: String? = nil, environment: AppStoreEnvironment? = nil,
        storefront: String? = nil, storefrontID: String? = nil, transactionReason: TransactionReason? = nil,
        currency: String? = nil, price: Int64? = nil, offerDiscountType: OfferDiscountType? = nil,
        appTransactionID: String? = nil, offerPeriod: String? = nil, revocationType: RevocationType? = nil,
        revocationPercentage: Int? = nil, advancedCommerceInfo: JSONValue? = nil,
        billingPlanType: BillingPlanType? = nil, commitmentInfo: TransactionCommitmentInfo? = nil,
        deviceVerification: String? = nil, deviceVerificationNonce: String? = nil,
        previousOriginalTransactionID: String? = nil
    ) {
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.webOrderLineItemID = webOrderLineItemID
        self.bundleID = bundleID
        self.productID = productID
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.type = type
        self.appAccountToken = appAccountToken
        self.inAppOwnershipType = inAppOwnershipType
        self.signedDate = signedDate
        self.revocationReason = revocationReason
        self.revocationDate = revocationDate
        self.isUpgraded = isUpgraded
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.environment = environment
        self.storefront = storefront
        self.storefrontID = storefrontID
        self.transactionReason = transactionReason
        self.currency = currency
        self.price = price
        self.offerDiscountType = offerDiscountType
        self.appTransactionID = appTransactionID
        self.offerPeriod = offerPeriod
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.advancedCommerceInfo = advancedCommerceInfo
        self.billingPlanType = billingPlanType
        self.commitmentInfo = commitmentInfo
        self.deviceVerification = deviceVerification
        self.deviceVerificationNonce = deviceVerificationNonce
        self.previousOriginalTransactionID = previousOriginalTransactionID
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case transactionID = "transactionId"
        case originalTransactionID = "originalTransactionId"
        case webOrderLineItemID = "webOrderLineItemId"
        case bundleID = "bundleId"
        case productID = "productId"
        case subscriptionGroupIdentifier
        case purchaseDate
        case originalPurchaseDate
        case expiresDate
        case quantity
        case type
        case appAccountToken
        case inAppOwnershipType
        case signedDate
        case revocationReason
        case revocationDate
        case isUpgraded
        case offerType
        case offerIdentifier
        case environment
        case storefront
        case storefrontID = "storefrontId"
        case transactionReason
        case currency
        case price
        case offerDiscountType
        case appTransactionID = "appTransactionId"
        case offerPeriod
        case revocationType
        case revocationPercentage
        case advancedCommerceInfo
        case billingPlanType
        case commitmentInfo
        case deviceVerification
        case deviceVerificationNonce
        case previousOriginalTransactionID = "previousOriginalTransactionId"
    }
}

extension JWSTransactionDecodedPayload: SignedPayload {
    /// ``signedDate``.
    public var signedPayloadDate: Date? { signedDate }
    /// ``bundleID``.
    public var signedPayloadBundleID: String? { bundleID }
    /// ``environment``.
    public var signedPayloadEnvironment: AppStoreEnvironment? { environment }
    /// Always `nil`: a transaction does not name the app's Apple ID.
    public var signedPayloadAppAppleID: Int64? { nil }
}

extension JWSTransactionDecodedPayload {
    /// ``price`` as an amount of ``currency``: `10990` milliunits is `10.99`.
    public var priceAmount: Decimal? { price.map(Decimal.fromMilliunits) }

    /// ``offerPeriod`` parsed, or `nil` when it is absent or not a single-unit ISO 8601 duration.
    public var offerPeriodValue: SubscriptionPeriod? { offerPeriod.flatMap(SubscriptionPeriod.init(iso8601:)) }
}

extension Decimal {
    /// The amount that `milliunits` thousandths of a currency unit make, exactly.
    static func fromMilliunits(_ milliunits: Int64) -> Decimal {
        Decimal(sign: milliunits < 0 ? .minus : .plus, exponent: -3, significand: Decimal(milliunits.magnitude))
    }
}
