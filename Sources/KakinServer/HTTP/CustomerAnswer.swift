import AppStoreModels
import Foundation

/// What the server answers about a customer: its own type, bounded whatever the history, with
/// dates as integer epoch milliseconds.
struct CustomerAnswer: Encodable, Sendable {
    struct Entitlement: Encodable, Sendable {
        var identifier: String
        var productId: String
        var isActive: Bool
        var expiresDate: Int64?
        var revocationDate: Int64?
        var transactionId: String
        var originalTransactionId: String
    }

    struct Transaction: Encodable, Sendable {
        var transactionId: String
        var originalTransactionId: String
        var productId: String
        var productType: String
        var quantity: Int
        var purchaseDate: Int64
        var expiresDate: Int64?
        var revocationDate: Int64?
        var revocationReason: Int?
        var environment: String
        var source: String
        /// The JWS the transaction was verified from, only when the request asked for it.
        var signedTransaction: String?

        init(_ transaction: RecordedTransaction, includeJWS: Bool) {
            transactionId = transaction.transactionID
            originalTransactionId = transaction.originalTransactionID
            productId = transaction.productID
            productType = transaction.productType.rawValue
            quantity = transaction.quantity
            purchaseDate = epochMilliseconds(transaction.purchaseDate)
            expiresDate = transaction.expiresDate.map(epochMilliseconds)
            revocationDate = transaction.revocationDate.map(epochMilliseconds)
            revocationReason = transaction.revocationReason?.rawValue
            environment = transaction.environment.rawValue
            source = transaction.source.rawValue
            signedTransaction = includeJWS ? transaction.signedTransaction : nil
        }
    }

    var bundleId: String
    var appUserId: String
    var entitlements: [Entitlement]
    var balances: [String: Int64]
    /// The newest transactions, newest first; the rest through `GET /v1/customers/{id}/transactions`.
    var transactions: [Transaction]
    /// How many transactions the customer has in all.
    var transactionCount: Int

    init(_ summary: CustomerSummary, entitlements: [AppStoreEntitlement], includeJWS: Bool) {
        bundleId = summary.bundleID
        appUserId = summary.appUserID
        self.entitlements = entitlements.map {
            Entitlement(
                identifier: $0.identifier, productId: $0.productID, isActive: $0.isActive,
                expiresDate: $0.expiresDate.map(epochMilliseconds),
                revocationDate: $0.revocationDate.map(epochMilliseconds), transactionId: $0.transactionID,
                originalTransactionId: $0.originalTransactionID)
        }
        balances = summary.balances
        transactions = summary.recentTransactions.map { Transaction($0, includeJWS: includeJWS) }
        transactionCount = summary.transactionCount
    }
}

typealias AppStoreEntitlement = Entitlement

/// The signed envelope of a customer answer: the client's nonce, the time, the customer.
struct SignedCustomerAnswer: Encodable, Sendable {
    var nonce: String?
    var signedDate: Int64
    var customer: CustomerAnswer
}

/// A page of a customer's transactions, newest first.
struct TransactionPageAnswer: Encodable, Sendable {
    var nonce: String?
    var signedDate: Int64
    var bundleId: String
    var appUserId: String
    var transactions: [CustomerAnswer.Transaction]
    /// Pass as `?cursor=` for the next page; absent on the last page.
    var nextCursor: String?
}

func epochMilliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
