public import AppStoreModels
public import Foundation
public import KakinCore

/// Where the server learned of a transaction.
public enum TransactionSource: String, Codable, Hashable, Sendable {
    /// Posted by the app (StoreKit 2 signed transaction or sandbox).
    case app
    /// Carried by an App Store Server Notification.
    case notification
    /// Found by reconciliation against the App Store Server API.
    case reconciliation
    /// Read from an app receipt (the legacy verifyReceipt flow).
    case receipt
}

/// A verified App Store transaction as the ledger keeps it: one row per `transactionId`.
public struct RecordedTransaction: Codable, Hashable, Sendable {
    /// Apple's `transactionId`: this purchase, renewal or restore.
    public var transactionID: String
    /// Apple's `originalTransactionId`: the first purchase, shared by its renewals and restores.
    public var originalTransactionID: String
    /// The app it was bought in.
    public var bundleID: String
    /// The app's own user ID; `nil` until someone who knows the customer (the app, or an earlier
    /// transaction of the same purchase) says who it is.
    public var appUserID: String?
    /// The product bought.
    public var productID: String
    /// The product's type, which decides how long it gives access (see ``EntitlementRules``).
    public var productType: ProductType
    /// How many units were bought (consumables; 1 otherwise).
    public var quantity: Int
    /// When the App Store charged for it.
    public var purchaseDate: Date
    /// When the period it pays for ends (subscriptions); `nil` for products that do not expire.
    public var expiresDate: Date?
    /// When Apple refunded or revoked it; `nil` while it stands.
    public var revocationDate: Date?
    /// Why it was refunded, when it was.
    public var revocationReason: RevocationReason?
    /// How much Apple took back: all (`REFUND_FULL`), a share (`REFUND_PRORATED`), or access ended
    /// by family sharing (`FAMILY_REVOKE`); `nil` when Apple does not say.
    public var revocationType: RevocationType?
    /// The refunded share in milliunits of a percent (Apple's `revocationPercentage`: 50000 is
    /// 50 %); `nil` means the whole transaction. See ``revokedShare``.
    public var revocationPercentage: Int?
    /// The environment that signed it: Production or Sandbox.
    public var environment: AppStoreEnvironment
    /// The UUID the app attached to the purchase, when it did.
    public var appAccountToken: String?
    /// The JWS it was verified from, kept as evidence (`nil` for receipt-derived rows).
    public var signedTransaction: String?
    /// How the server first learned of it.
    public var source: TransactionSource
    /// When the server first recorded it.
    public var recordedAt: Date
    /// For auto-renewable subscriptions, the kind of period it pays for, read from its offer when
    /// it was recorded (`SubscriptionPeriodType(offerType:discountType:)`); `nil` for
    /// other products and for rows recorded before the ledger kept it.
    public var periodType: SubscriptionPeriodType?
    /// The price Apple signed for it (`price`), in milliunits of ``currency``, for one unit; `nil`
    /// when not known (rows recorded before the ledger kept it, receipt-derived rows).
    public var price: Int64?
    /// The ISO 4217 currency of ``price``, as Apple signed it.
    public var currency: String?
    /// Where the customer paid: the App Store, or the app's web checkout (Stripe). For a web
    /// purchase the transaction ID is Stripe's (the payment intent's, or the invoice's of a
    /// subscription period), the original transaction ID the payment intent's or the
    /// subscription's, and the environment Sandbox for the account's test mode.
    public var store: PurchaseStore = .appStore
    /// The storefront (ISO 3166-1 alpha-3) Apple signed, the ownership (a purchase of one's own
    /// or shared by family) and the offer's discount type, as read from ``signedTransaction``
    /// when it was verified; all `nil` when not read, and the metrics read them from
    /// ``signedTransaction`` instead. Not stored: the signed transaction holds them.
    public var storefront: String?
    /// See ``storefront``.
    public var inAppOwnershipType: InAppOwnershipType?
    /// See ``storefront``.
    public var offerDiscountType: OfferDiscountType?

    /// Creates a recorded transaction from its parts.
    public init(
        transactionID: String, originalTransactionID: String, bundleID: String, appUserID: String? = nil,
        productID: String, productType: ProductType, quantity: Int = 1, purchaseDate: Date, expiresDate: Date? = nil,
        revocationDate: Date? = nil, revocationReason: RevocationReason? = nil, revocationType: RevocationType? = nil,
        revocationPercentage: Int? = nil, environment: AppStoreEnvironment, appAccountToken: String? = nil,
        signedTransaction: String? = nil, source: TransactionSource, recordedAt: Date,
        periodType: SubscriptionPeriodType? = nil, price: Int64? = nil, currency: String? = nil,
        storefront: String? = nil, inAppOwnershipType: InAppOwnershipType? = nil,
        offerDiscountType: OfferDiscountType? = nil, store: PurchaseStore = .appStore
    ) {
        self.store = store
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.bundleID = bundleID
        self.appUserID = appUserID
        self.productID = productID
        self.productType = productType
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.environment = environment
        self.appAccountToken = appAccountToken
        self.signedTransaction = signedTransaction
        self.source = source
        self.recordedAt = recordedAt
        self.periodType = periodType
        self.price = price
        self.currency = currency
        self.storefront = storefront
        self.inAppOwnershipType = inAppOwnershipType
        self.offerDiscountType = offerDiscountType
    }
}

extension RecordedTransaction {
    /// The whole of a transaction in milliunits of a percent.
    public static let wholeShare = 100_000

    /// The share of the transaction the ledger takes back when it is revoked, in milliunits of a
    /// percent: ``revocationPercentage`` for a prorated refund (`REFUND_PRORATED`) that names a
    /// share in 1…99999, the whole transaction (100000) for anything else, including a refund
    /// without a percentage and a percentage Apple could not mean (0 or above 100000).
    public var revokedShare: Int {
        guard revocationType == .refundProrated, let share = revocationPercentage, (1..<Self.wholeShare).contains(share)
        else { return Self.wholeShare }
        return share
    }
}

/// What buying a product gives, from the grants file.
public enum Grant: Codable, Hashable, Sendable {
    /// Access named `identifier` (e.g. `removeAds`, `premium`) while the transaction is valid.
    case entitlement(String)
    /// `amount` units of a currency (e.g. 100 `points`) per unit bought.
    case currency(String, amount: Int64)
    /// The hosted content package of the product.
    case content
}

/// What happens to currency already spent when its purchase is refunded.
public enum ClawbackPolicy: String, Codable, Hashable, Sendable {
    /// Take back everything; the balance may go below zero (a debt the next purchase pays off).
    case allowNegative
    /// Take back what is left, down to zero; the shortfall is recorded but not collected.
    case clampAtZero
}

/// One line of the append-only ledger.
public struct LedgerEntry: Codable, Hashable, Sendable {
    /// What a ledger line does to a balance.
    public enum Kind: String, Codable, Hashable, Sendable {
        /// Currency credited for a purchase.
        case credit
        /// Currency spent by the customer.
        case spend
        /// Currency taken back after a refund or revocation.
        case clawback
    }

    /// What the line does: a credit, a spend or a clawback.
    public var kind: Kind
    /// The app whose currency it is.
    public var bundleID: String
    /// The customer whose balance changes.
    public var appUserID: String
    /// The currency's name, as the grants file spells it (`points`).
    public var currency: String
    /// Signed: positive for credits, negative for spends and clawbacks.
    public var amount: Int64
    /// The transaction that credited or lost the currency; `nil` for a spend.
    public var transactionID: String?
    /// Unique across the ledger: the same operation is never applied twice.
    public var idempotencyKey: String
    /// For clawbacks under `clampAtZero`: what could not be taken back.
    public var shortfall: Int64
    /// When the line was written.
    public var createdAt: Date

    /// Creates a ledger line from its parts.
    public init(
        kind: Kind, bundleID: String, appUserID: String, currency: String, amount: Int64, transactionID: String?,
        idempotencyKey: String, shortfall: Int64 = 0, createdAt: Date
    ) {
        self.kind = kind
        self.bundleID = bundleID
        self.appUserID = appUserID
        self.currency = currency
        self.amount = amount
        self.transactionID = transactionID
        self.idempotencyKey = idempotencyKey
        self.shortfall = shortfall
        self.createdAt = createdAt
    }
}

/// A customer as the ledger holds them: their transactions, ledger lines and balances. What they
/// have access to is derived from these by the server's grants.
public struct CustomerState: Codable, Hashable, Sendable {
    /// The app.
    public var bundleID: String
    /// The customer's ID, as the app knows them.
    public var appUserID: String
    /// Balances by currency.
    public var balances: [String: Int64]
    /// Every transaction of the customer, oldest first.
    public var transactions: [RecordedTransaction]
    /// The ledger lines, oldest first.
    public var ledger: [LedgerEntry]

    /// Creates a customer's state from its parts.
    public init(
        bundleID: String, appUserID: String, balances: [String: Int64], transactions: [RecordedTransaction],
        ledger: [LedgerEntry]
    ) {
        self.bundleID = bundleID
        self.appUserID = appUserID
        self.balances = balances
        self.transactions = transactions
        self.ledger = ledger
    }
}

/// What recording a transaction did.
public enum RecordOutcome: Hashable, Sendable {
    /// First time seen: recorded (and granted, if its owner is known and it is not revoked).
    case recorded
    /// Seen before: nothing granted again. `ownerAssigned` is true when this call told the ledger
    /// who the customer is, and the grants were applied now.
    case duplicate(ownerAssigned: Bool)
    /// Seen before for another customer: refused, nothing changed.
    case ownedByAnotherCustomer(String)

}

/// Everything one verified transaction asks of the ledger, applied in one database transaction by
/// ``LedgerStore/ingest(_:)``: record it once and grant once, move the purchase to its customer
/// when another customer owns it and ``transfersOwnership`` allows it, take back what a revocation
/// says, and read the customer's summary as it stands afterwards.
public struct LedgerIngest: Sendable {
    /// The verified transaction.
    public var transaction: RecordedTransaction
    /// `SignedDigest` of the transaction's signed JWS, when the caller took it already (it is
    /// taken from the JWS otherwise).
    public var signedDigest: SignedDigest?
    /// What the product grants.
    public var grants: [Grant]
    /// Whether a purchase that another customer owns moves to the transaction's customer (the
    /// app's transfer policy, never for consumables). Without it the outcome is
    /// ``RecordOutcome/ownedByAnotherCustomer(_:)`` and nothing changes.
    public var transfersOwnership: Bool
    /// How currency is taken back when the transaction carries a revocation.
    public var clawbackPolicy: ClawbackPolicy
    /// The summary to read once everything is applied: the `recent` newest transactions, with
    /// their JWS when `withJWS`; `nil` reads none.
    public var summary: (recent: Int, withJWS: Bool)?
    /// A call owed to Apple when this ingest records the transaction for the first time: written
    /// (once per ID) in the same database transaction, so it commits with the purchase or not at all.
    public var appleRequestOnRecord: AppleRequestRecord?
    /// A call owed to Apple when this ingest moves the purchase to the transaction's customer,
    /// written in the same database transaction as the move.
    public var appleRequestOnTransfer: AppleRequestRecord?

    /// Creates the request from its parts.
    public init(
        _ transaction: RecordedTransaction, signedDigest: SignedDigest? = nil, grants: [Grant],
        transfersOwnership: Bool = false, clawbackPolicy: ClawbackPolicy = .clampAtZero,
        summary: (recent: Int, withJWS: Bool)? = nil, appleRequestOnRecord: AppleRequestRecord? = nil,
        appleRequestOnTransfer: AppleRequestRecord? = nil
    ) {
        self.appleRequestOnRecord = appleRequestOnRecord
        self.appleRequestOnTransfer = appleRequestOnTransfer
        self.transaction = transaction
        self.signedDigest = signedDigest
        self.grants = grants
        self.transfersOwnership = transfersOwnership
        self.clawbackPolicy = clawbackPolicy
        self.summary = summary
    }
}

/// What ``LedgerStore/ingest(_:)`` did, all of it committed together.
public struct LedgerIngestOutcome: Hashable, Sendable {
    /// What recording the transaction did.
    public var recorded: RecordOutcome
    /// The previous owner, when the purchase moved to the transaction's customer.
    public var transferredFrom: String?
    /// Whether the transaction was revoked now (a revocation, or a larger refunded share, the
    /// ledger did not know).
    public var revoked: Bool
    /// The customer's summary after the change, when it was asked for and the transaction has a
    /// customer who owns it now.
    public var summary: CustomerSummary?

    /// Creates the outcome from its parts.
    public init(
        recorded: RecordOutcome, transferredFrom: String? = nil, revoked: Bool = false, summary: CustomerSummary? = nil
    ) {
        self.recorded = recorded
        self.transferredFrom = transferredFrom
        self.revoked = revoked
        self.summary = summary
    }
}

/// What a spend did.
public enum SpendOutcome: Hashable, Sendable {
    /// Spent; the balance after it.
    case spent(balance: Int64)
    /// The same idempotency key was used before: nothing spent again; the balance now.
    case alreadySpent(balance: Int64)
    /// Not enough currency: nothing spent; the balance now.
    case insufficientBalance(balance: Int64)
}

/// An event for the webhooks outbox.
public struct LedgerEvent: Codable, Hashable, Sendable {
    /// The event's ID, increasing as events are written; receivers deduplicate by it.
    public var id: Int64
    /// `transaction.recorded`, `entitlement.granted`, `transaction.revoked`, `balance.spent`, …
    public var type: String
    /// The app the event is about.
    public var bundleID: String
    /// The customer the event is about, when there is one: an anonymous customer as
    /// ``CustomerIDRedaction/redacted(_:)`` writes it (events go to webhooks; no anonymous ID
    /// leaves the ledger whole).
    public var appUserID: String?
    /// The event's JSON body.
    public var payload: Data
    /// When the event was written.
    public var createdAt: Date

    /// Creates an event from its parts.
    public init(id: Int64, type: String, bundleID: String, appUserID: String?, payload: Data, createdAt: Date) {
        self.id = id
        self.type = type
        self.bundleID = bundleID
        self.appUserID = appUserID
        self.payload = payload
        self.createdAt = createdAt
    }
}

/// A hosted content package uploaded by an admin.
public struct ContentPackage: Codable, Hashable, Sendable {
    /// The app that serves it.
    public var bundleID: String
    /// The product whose purchase gives access to it.
    public var productID: String
    /// The version name given at upload; customers download the latest one.
    public var version: String
    /// Lowercase hex SHA-256 of the bytes.
    public var sha256: String
    /// The package's size in bytes.
    public var size: Int64
    /// When it was uploaded.
    public var uploadedAt: Date

    /// Creates a package's record from its parts.
    public init(bundleID: String, productID: String, version: String, sha256: String, size: Int64, uploadedAt: Date) {
        self.bundleID = bundleID
        self.productID = productID
        self.version = version
        self.sha256 = sha256
        self.size = size
        self.uploadedAt = uploadedAt
    }
}

/// A bounded view of a customer, what answers are made of (see ``LedgerStore/customerSummary(bundleID:appUserID:recent:)``).
public struct CustomerSummary: Hashable, Sendable {
    /// The app.
    public var bundleID: String
    /// The customer's ID, as the app knows them.
    public var appUserID: String
    /// Balances by currency.
    public var balances: [String: Int64]
    /// Every transaction that can grant access (not consumables), oldest first.
    public var accessTransactions: [RecordedTransaction]
    /// The newest transactions, newest first.
    public var recentTransactions: [RecordedTransaction]
    /// How many transactions the customer has in all.
    public var transactionCount: Int

    /// Creates a summary from its parts.
    public init(
        bundleID: String, appUserID: String, balances: [String: Int64], accessTransactions: [RecordedTransaction],
        recentTransactions: [RecordedTransaction], transactionCount: Int
    ) {
        self.bundleID = bundleID
        self.appUserID = appUserID
        self.balances = balances
        self.accessTransactions = accessTransactions
        self.recentTransactions = recentTransactions
        self.transactionCount = transactionCount
    }
}

/// Where a page of transactions ends: the last row's purchase date and transaction ID.
public struct TransactionCursor: Hashable, Sendable {
    /// The purchase date of the last row of the page.
    public var purchaseDate: Date
    /// The transaction ID of the last row, which orders rows with the same purchase date.
    public var transactionID: String

    /// Creates a cursor from its parts.
    public init(purchaseDate: Date, transactionID: String) {
        self.purchaseDate = purchaseDate
        self.transactionID = transactionID
    }

    /// The cursor after `transaction`.
    public init(after transaction: RecordedTransaction) {
        self.init(purchaseDate: transaction.purchaseDate, transactionID: transaction.transactionID)
    }

    /// An opaque token for URLs: base64url of `<epoch ms>:<transaction ID>`.
    public var token: String {
        let text = "\(Int64((purchaseDate.timeIntervalSince1970 * 1000).rounded())):\(transactionID)"
        return Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Reads a token made by ``token``; `nil` when it is not one.
    public init?(token: String) {
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard token.count <= 1024, let data = Data(base64Encoded: base64),
            let text = String(data: data, encoding: .utf8),
            let colon = text.firstIndex(of: ":"), let milliseconds = Int64(text[..<colon])
        else { return nil }
        let id = String(text[text.index(after: colon)...])
        guard !id.isEmpty else { return nil }
        self.init(purchaseDate: Date(timeIntervalSince1970: Double(milliseconds) / 1000), transactionID: id)
    }
}
