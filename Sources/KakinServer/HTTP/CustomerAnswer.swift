import AppStoreModels
import Foundation
import KakinLedger
import KakinWire

// The answers' types belong to the shared API contract (KakinWire); this file builds them from
// the ledger's rows, so the ledger's own types never reach the wire.

extension CustomerAnswer.Transaction {
    init(recorded transaction: RecordedTransaction, includeJWS: Bool) {
        self.init(
            transactionId: transaction.transactionID,
            originalTransactionId: transaction.originalTransactionID,
            productId: transaction.productID,
            productType: transaction.productType.rawValue,
            quantity: transaction.quantity,
            purchaseDate: epochMilliseconds(transaction.purchaseDate),
            expiresDate: transaction.expiresDate.map(epochMilliseconds),
            revocationDate: transaction.revocationDate.map(epochMilliseconds),
            revocationReason: transaction.revocationReason?.rawValue,
            environment: transaction.environment.rawValue,
            source: transaction.source.rawValue,
            signedTransaction: includeJWS ? transaction.signedTransaction : nil,
            store: transaction.store)
    }
}

extension CustomerAnswer {
    init(summary: CustomerSummary, entitlements: [Entitlement], includeJWS: Bool) {
        self.init(
            bundleId: summary.bundleID,
            appUserId: summary.appUserID,
            entitlements: entitlements,
            balances: summary.balances,
            transactions: summary.recentTransactions.map { Transaction(recorded: $0, includeJWS: includeJWS) },
            transactionCount: summary.transactionCount)
    }
}

func epochMilliseconds(_ date: Date) -> Int64 { KakinJSON.epochMilliseconds(date) }
