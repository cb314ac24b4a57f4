public import AppStoreModels
public import Foundation

/// One transaction as the sandbox keeps it: a purchase, a restore-visible record, or a renewal.
///
/// This is the sandbox's own record, from which it produces what Apple produces: a signed
/// `JWSTransactionDecodedPayload`, an in-app record in the app receipt, a `verifyReceipt` entry.
public struct SandboxTransaction: LoggedRecord, Identifiable {
    /// The transaction ID (`transactionId`), numeric like Apple's.
    public var id: String
    /// The first transaction of this purchase (`originalTransactionId`); the same across renewals.
    public var originalID: String
    /// One per subscription billing period (`webOrderLineItemId`).
    public var webOrderLineItemID: String?
    /// The tester who bought it.
    public var testerID: String
    /// The product.
    public var productID: String
    /// The kind of product.
    public var productType: ProductType
    /// The subscription group, for auto-renewable subscriptions.
    public var subscriptionGroupID: String?
    /// When the App Store charged (or the renewal took effect).
    public var purchaseDate: Date
    /// When the original purchase was made.
    public var originalPurchaseDate: Date
    /// When a subscription period ends.
    public var expiresDate: Date?
    /// How many consumables were bought.
    public var quantity: Int
    /// The UUID the app attached to the purchase (`appAccountToken`), lowercased.
    public var appAccountToken: String?
    /// StoreKit 1's `applicationUsername`, when it is not a UUID.
    public var applicationUsername: String?
    /// The storefront's ISO alpha-3 country code.
    public var storefront: String
    /// The storefront's Apple identifier.
    public var storefrontID: String
    /// ISO 4217 currency code.
    public var currency: String
    /// The price in milliunits of the currency (990 = 0.99).
    public var priceMilliunits: Int64
    /// Purchase or renewal.
    public var reason: TransactionReason
    /// The offer applied, if any.
    public var offerType: OfferType?
    /// The offer's identifier (promotional offers).
    public var offerIdentifier: String?
    /// How the offer was paid.
    public var offerDiscountType: OfferDiscountType?
    /// The offer's period (ISO 8601), e.g. `P1W`.
    public var offerPeriod: String?
    /// The customer moved to a higher subscription level; this transaction stopped giving access.
    public var isUpgraded: Bool
    /// When the App Store refunded or revoked it.
    public var revocationDate: Date?
    /// Why it was refunded.
    public var revocationReason: RevocationReason?
    /// How much was taken back: a full refund, a prorated (partial) refund, or access ended by
    /// family sharing.
    public var revocationType: RevocationType?
    /// The refunded share in milliunits of a percent (`revocationPercentage`): 100000 for a full
    /// refund, less for a prorated one; `nil` when not refunded (or revoked by family sharing).
    public var revocationPercentage: Int?
    /// How the period was billed: `BillingPlanType.monthly` for one month of a
    /// commitment plan; `nil` for everything billed up front, which Apple leaves unmarked.
    public var billingPlanType: BillingPlanType?
    /// Which payment of a commitment plan this transaction is; `nil` outside commitment plans.
    public var commitmentInfo: TransactionCommitmentInfo?
    /// Whether the app finished the transaction.
    public var isFinished: Bool
    /// The app download transaction this belongs to.
    public var appTransactionID: String
    /// The order ID of the customer's invoice (Look Up Order ID).
    public var orderID: String?

    /// Creates a record.
    public init(
        id: String, originalID: String, webOrderLineItemID: String? = nil, testerID: String, productID: String,
        productType: ProductType, subscriptionGroupID: String? = nil, purchaseDate: Date, originalPurchaseDate: Date,
        expiresDate: Date? = nil, quantity: Int = 1, appAccountToken: String? = nil, applicationUsername: String? = nil,
        storefront: String, storefrontID: String, currency: String, priceMilliunits: Int64,
        reason: TransactionReason = .purchase, offerType: OfferType? = nil, offerIdentifier: String? = nil,
        offerDiscountType: OfferDiscountType? = nil, offerPeriod: String? = nil, isUpgraded: Bool = false,
        revocationDate: Date? = nil, revocationReason: RevocationReason? = nil, isFinished: Bool = false,
        appTransactionID: String, orderID: String? = nil
    ) {
        self.id = id
        self.originalID = originalID
        self.webOrderLineItemID = webOrderLineItemID
        self.testerID = testerID
        self.productID = productID
        self.productType = productType
        self.subscriptionGroupID = subscriptionGroupID
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.appAccountToken = appAccountToken
        self.applicationUsername = applicationUsername
        self.storefront = storefront
        self.storefrontID = storefrontID
        self.currency = currency
        self.priceMilliunits = priceMilliunits
        self.reason = reason
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.offerDiscountType = offerDiscountType
        self.offerPeriod = offerPeriod
        self.isUpgraded = isUpgraded
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.isFinished = isFinished
        self.appTransactionID = appTransactionID
        self.orderID = orderID
    }

    /// How the customer has the product: `nil` (or `PURCHASED`) when they bought it,
    /// `FAMILY_SHARED` when a family member shared it with them.
    public var ownership: InAppOwnershipType?

    /// Whether the transaction was refunded or revoked.
    public var isRevoked: Bool { revocationDate != nil }

    /// Whether the transaction gives access at `date`: not revoked, not upgraded away, and for
    /// subscriptions, inside its period.
    public func entitles(at date: Date) -> Bool {
        guard !isRevoked, !isUpgraded else { return false }
        switch productType {
        case .consumable: return false
        case .autoRenewableSubscription, .nonRenewingSubscription:
            guard let expiresDate else { return productType == .nonRenewingSubscription }
            return purchaseDate <= date && date < expiresDate
        default: return true
        }
    }

    /// What the App Store signs for this transaction.
    public func payload(bundleID: String, signedDate: Date) -> JWSTransactionDecodedPayload {
        JWSTransactionDecodedPayload(
            transactionID: id, originalTransactionID: originalID, webOrderLineItemID: webOrderLineItemID,
            bundleID: bundleID, productID: productID, subscriptionGroupIdentifier: subscriptionGroupID,
            purchaseDate: purchaseDate, originalPurchaseDate: originalPurchaseDate, expiresDate: expiresDate,
            quantity: quantity, type: productType, appAccountToken: appAccountToken,
            inAppOwnershipType: ownership ?? .purchased, signedDate: signedDate, revocationReason: revocationReason,
            revocationDate: revocationDate, isUpgraded: isUpgraded ? true : nil, offerType: offerType,
            offerIdentifier: offerIdentifier, environment: .sandbox, storefront: storefront, storefrontID: storefrontID,
            transactionReason: reason, currency: currency, price: priceMilliunits, offerDiscountType: offerDiscountType,
            appTransactionID: appTransactionID, offerPeriod: offerPeriod, revocationType: revocationType,
            revocationPercentage: revocationPercentage, billingPlanType: billingPlanType,
            commitmentInfo: commitmentInfo)
    }

    /// The in-app purchase record of the app receipt.
    public var receiptRecord: InAppPurchaseReceipt {
        InAppPurchaseReceipt(
            quantity: quantity, productID: productID, transactionID: id, purchaseDate: purchaseDate,
            originalTransactionID: originalID, originalPurchaseDate: originalPurchaseDate,
            expiresDate: expiresDate, webOrderLineItemID: webOrderLineItemID.flatMap { Int64($0) },
            cancellationDate: revocationDate,
            isTrialPeriod: offerType == .introductory && offerDiscountType == .freeTrial ? true : nil,
            isInIntroOfferPeriod: offerType == .introductory ? true : nil,
            promotionalOfferIdentifier: offerType == .promotional ? offerIdentifier : nil)
    }
}

extension SandboxTransaction {
    /// Found by transaction ID.
    public var recordKey: String? { id }
    /// Listed by tester, by original transaction (a subscription's renewals) and by order ID.
    public var recordGroups: [RecordGroup] {
        guard let orderID else { return [.tester(testerID), .original(originalID)] }
        return [.tester(testerID), .original(originalID), .order(orderID)]
    }
}
