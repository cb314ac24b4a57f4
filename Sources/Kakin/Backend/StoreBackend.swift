public import Foundation
public import KakinWire

/// What a purchase came to at the store.
public enum StorePurchaseResult: Hashable, Sendable {
    /// Paid; the transaction must be delivered to the server and then finished.
    case purchased(StoreTransaction)
    /// Waiting for approval (ask to buy) or for the customer to complete it.
    case pending
    /// The customer cancelled.
    case cancelled
}

/// The store the SDK talks to: StoreKit on a device, or Kakin's sandbox App Store anywhere.
///
/// Every operation is one StoreKit operation. Implementations are thin: all logic (delivery,
/// retries, state) lives above them, in code that runs and is tested on Linux.
public protocol StoreBackend: Sendable {
    /// Identifies the store and account, so one transaction observer exists per store however many
    /// managers an app makes.
    var storeIdentifier: String { get }
    /// Whether the account may buy (parental restrictions).
    func canMakePayments() async throws -> Bool
    /// Products for IDs, localized for the account's storefront, and the IDs that are not valid.
    func products(for identifiers: [String]) async throws -> (products: [StoreProduct], invalid: [InvalidProduct])
    /// Buys a product; throws ``KakinError`` with the store's code for failures other than cancel.
    func purchase(_ productID: String, quantity: Int, appAccountToken: UUID?) async throws -> StorePurchaseResult
    /// Buys a product with the options StoreKit takes beyond the quantity and token: a
    /// server-signed promotional offer, an introductory-offer eligibility, a win-back offer. A
    /// store that cannot apply them throws ``KakinError/Code/storeFailure``.
    func purchase(_ productID: String, options: StorePurchaseOptions) async throws -> StorePurchaseResult
    /// Transactions not finished yet.
    func unfinishedTransactions() async throws -> [StoreTransaction]
    /// Finishes a transaction, after the server acknowledged it.
    func finish(_ transaction: StoreTransaction) async throws
    /// Non-consumables and subscriptions of the account (restore).
    func restore() async throws -> [StoreTransaction]
    /// The account's current entitlements as the store itself vouches for them, without a sync:
    /// what offline entitlements are computed from while the purchase server cannot be reached.
    /// On a device, only transactions StoreKit verified.
    func currentEntitlements() async throws -> [StoreTransaction]
    /// Transactions that arrive from outside a purchase call (ask-to-buy approvals, renewals,
    /// refunds, other devices), as StoreKit's `Transaction.updates`.
    func transactionUpdates() -> AsyncStream<StoreTransaction>
    /// The app receipt, base64 (for the legacy server flow).
    func appReceipt() async throws -> String?
    /// The device's app transaction, as the store signed it (StoreKit's `AppTransaction.shared`,
    /// its `jwsRepresentation`): which Apple Account downloaded the app on this device. The SDK
    /// sends it with the transactions it did not just buy (restores, launch replays, updates), as
    /// proof that this device is signed in to the Apple Account that bought them; it asks once and
    /// keeps the answer. `nil` when the store has none (the default for a store that does not
    /// implement it).
    func appTransaction() async throws -> String?
    /// Shows the store's own sheet where the customer manages their subscriptions (changes plan,
    /// cancels), for one subscription group or all of them. What the customer changes arrives
    /// later, as the store's transactions and renewal information do. A store without the sheet
    /// throws ``KakinError/Code/unsupported``.
    func showManageSubscriptions(subscriptionGroupID: String?) async throws
    /// Shows the store's refund request sheet for a transaction the customer bought. A refund
    /// the store grants later arrives as a revoked transaction. A store without the sheet throws
    /// ``KakinError/Code/unsupported``.
    func beginRefundRequest(for transactionID: String) async throws -> RefundRequestOutcome
    /// Shows the store's offer code redemption sheet. Where the store says what the customer
    /// redeemed (StoreKit since iOS 27, the sandbox), the transaction comes back to be delivered as
    /// a purchase's is; before, the sheet only closes, and a redeemed code arrives as an update. A
    /// store without the sheet throws ``KakinError/Code/unsupported``.
    func presentOfferCodeRedeemSheet() async throws -> OfferCodeRedemption
    /// The country of the App Store storefront the account buys from (StoreKit's
    /// `Storefront.current?.countryCode`), as an ISO 3166-1 alpha-3 code such as `USA`; `nil`
    /// when the store cannot say (the default for a store that does not implement it). It decides
    /// whether the app may offer web purchases (``KakinStore/webPurchaseStorefronts``).
    func storefrontCountryCode() async -> String?
}

/// What a refund request sheet came to.
public enum RefundRequestOutcome: Hashable, Sendable {
    /// The customer sent the request; the App Store decides later (a refund arrives as a revoked
    /// transaction).
    case requested
    /// The customer closed the sheet without asking.
    case cancelled
    /// The App Store already has a refund request for this purchase.
    case alreadyRequested
}

/// What a purchase asks of the store besides the product: StoreKit's purchase options.
public struct StorePurchaseOptions: Hashable, Sendable {
    /// How many (consumables only).
    public var quantity: Int
    /// The app account token the transaction will carry.
    public var appAccountToken: UUID?
    /// A promotional offer the purchase server signed (`SignedOffer.kind` `promotional`).
    public var promotionalOffer: SignedOffer?
    /// An introductory-offer eligibility the purchase server signed.
    public var introductoryOfferEligibility: SignedOffer?
    /// A win-back offer's ID (no signature needed).
    public var winBackOfferID: String?

    /// Creates options; one unit, no token and no offer unless given.
    public init(
        quantity: Int = 1, appAccountToken: UUID? = nil, promotionalOffer: SignedOffer? = nil,
        introductoryOfferEligibility: SignedOffer? = nil, winBackOfferID: String? = nil
    ) {
        self.quantity = quantity
        self.appAccountToken = appAccountToken
        self.promotionalOffer = promotionalOffer
        self.introductoryOfferEligibility = introductoryOfferEligibility
        self.winBackOfferID = winBackOfferID
    }

    /// Whether any offer is asked for.
    public var hasOffer: Bool {
        promotionalOffer != nil || introductoryOfferEligibility != nil || winBackOfferID != nil
    }
}

extension StoreBackend {
    /// `nil`: a store that does not say its storefront, where web purchases are never offered.
    public func storefrontCountryCode() async -> String? { nil }

    /// `nil`: a store without app transactions. Transactions are then delivered without the
    /// proof, and a purchase another customer owns stays theirs.
    public func appTransaction() async throws -> String? { nil }

    /// Throws ``KakinError/Code/unsupported``: a store that has no manage-subscriptions sheet.
    public func showManageSubscriptions(subscriptionGroupID: String?) async throws {
        throw KakinError(.unsupported, "\(storeIdentifier) has no manage-subscriptions sheet")
    }

    /// Throws ``KakinError/Code/unsupported``: a store that has no refund request sheet.
    public func beginRefundRequest(for transactionID: String) async throws -> RefundRequestOutcome {
        throw KakinError(.unsupported, "\(storeIdentifier) has no refund request sheet")
    }

    /// Throws ``KakinError/Code/unsupported``: a store that has no offer code redemption sheet.
    public func presentOfferCodeRedeemSheet() async throws -> OfferCodeRedemption {
        throw KakinError(.unsupported, "\(storeIdentifier) has no offer code redemption sheet")
    }

    /// Buys without offers through ``purchase(_:quantity:appAccountToken:)``; a store that has
    /// no way to apply offers refuses them.
    public func purchase(_ productID: String, options: StorePurchaseOptions) async throws -> StorePurchaseResult {
        guard !options.hasOffer else {
            throw KakinError(.storeFailure, "this store cannot apply offers")
        }
        return try await purchase(productID, quantity: options.quantity, appAccountToken: options.appAccountToken)
    }
}
