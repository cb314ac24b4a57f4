public import KakinCore

/// What the server says a customer has: entitlements, balances and the newest transactions.
///
/// Bounded whatever the customer's history (the rest through ``TransactionPage``); dates are
/// integer milliseconds since 1970.
public struct CustomerAnswer: Codable, Hashable, Sendable {
    /// One recorded transaction.
    public struct Transaction: Codable, Hashable, Sendable {
        /// Apple's transaction ID.
        public var transactionId: String
        /// The transaction ID of the original purchase, shared by its renewals and restores.
        public var originalTransactionId: String
        /// The product bought.
        public var productId: String
        /// Apple's product type: `Consumable`, `Non-Consumable`, `Auto-Renewable Subscription`, …
        public var productType: String
        /// How many units were bought.
        public var quantity: Int
        /// When it was bought, in milliseconds since 1970.
        public var purchaseDate: Int64
        /// When a subscription period ends, in milliseconds since 1970.
        public var expiresDate: Int64?
        /// When it was refunded or revoked, in milliseconds since 1970.
        public var revocationDate: Int64?
        /// Apple's revocation reason, for a revoked transaction (`0` other, `1` an issue in the app).
        public var revocationReason: Int?
        /// `Production`, `Sandbox`, …
        public var environment: String
        /// How it reached the server: the app, a receipt, a notification, reconciliation.
        public var source: String
        /// The JWS the transaction was verified from, only when the request asked for it.
        public var signedTransaction: String?
        /// Where the customer paid: the App Store or the app's web checkout. `nil` in an answer
        /// from a server that did not say (every purchase it knew was the App Store's).
        public var store: PurchaseStore?

        /// Creates a transaction record.
        public init(
            transactionId: String, originalTransactionId: String, productId: String, productType: String,
            quantity: Int, purchaseDate: Int64, expiresDate: Int64? = nil, revocationDate: Int64? = nil,
            revocationReason: Int? = nil, environment: String, source: String, signedTransaction: String? = nil,
            store: PurchaseStore? = nil
        ) {
            self.store = store
            self.transactionId = transactionId
            self.originalTransactionId = originalTransactionId
            self.productId = productId
            self.productType = productType
            self.quantity = quantity
            self.purchaseDate = purchaseDate
            self.expiresDate = expiresDate
            self.revocationDate = revocationDate
            self.revocationReason = revocationReason
            self.environment = environment
            self.source = source
            self.signedTransaction = signedTransaction
        }
    }

    /// The app the answer is about.
    public var bundleId: String
    /// The customer, as the app identifies them.
    public var appUserId: String
    /// The customer's access rights, active and inactive.
    public var entitlements: [Entitlement]
    /// Balances by currency, e.g. `["points": 100]`.
    public var balances: [String: Int64]
    /// The newest transactions, newest first.
    public var transactions: [Transaction]
    /// How many transactions the customer has in all.
    public var transactionCount: Int

    /// Creates a customer answer.
    public init(
        bundleId: String, appUserId: String, entitlements: [Entitlement], balances: [String: Int64],
        transactions: [Transaction], transactionCount: Int
    ) {
        self.bundleId = bundleId
        self.appUserId = appUserId
        self.entitlements = entitlements
        self.balances = balances
        self.transactions = transactions
        self.transactionCount = transactionCount
    }
}

/// The signed envelope of a customer answer: the client's nonce, when it was signed, the customer.
/// The body's exact bytes are signed (``KakinHeader/signature``).
public struct SignedCustomerAnswer: Codable, Hashable, Sendable {
    /// The nonce the request carried, echoed back; `nil` when it carried none.
    public var nonce: String?
    /// When the server signed the answer, in milliseconds since 1970.
    public var signedDate: Int64
    /// The customer.
    public var customer: CustomerAnswer

    /// Creates a signed envelope.
    public init(nonce: String?, signedDate: Int64, customer: CustomerAnswer) {
        self.nonce = nonce
        self.signedDate = signedDate
        self.customer = customer
    }
}

/// A page of a customer's transactions, newest first, signed like a customer answer.
public struct TransactionPage: Codable, Hashable, Sendable {
    /// The nonce the request carried, echoed back; `nil` when it carried none.
    public var nonce: String?
    /// When the server signed the page, in milliseconds since 1970.
    public var signedDate: Int64
    /// The app the page is about.
    public var bundleId: String
    /// The customer, as the app identifies them.
    public var appUserId: String
    /// This page's transactions, newest first.
    public var transactions: [CustomerAnswer.Transaction]
    /// Pass as `?cursor=` for the next page; absent on the last page.
    public var nextCursor: String?

    /// Creates a page.
    public init(
        nonce: String?, signedDate: Int64, bundleId: String, appUserId: String,
        transactions: [CustomerAnswer.Transaction], nextCursor: String?
    ) {
        self.nonce = nonce
        self.signedDate = signedDate
        self.bundleId = bundleId
        self.appUserId = appUserId
        self.transactions = transactions
        self.nextCursor = nextCursor
    }
}
