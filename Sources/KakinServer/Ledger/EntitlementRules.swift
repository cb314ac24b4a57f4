import AppStoreModels
public import Foundation
public import KakinWire

/// Derives a customer's entitlements from their transactions and the grants, at a moment.
///
/// An entitlement is active while some transaction granting it is valid: not refunded or revoked,
/// and for auto-renewable subscriptions, before its expiry. When several transactions grant the
/// same entitlement, the active one with the latest expiry wins; otherwise the latest one is shown
/// as inactive, so the app can say "expired" or "refunded".
public enum EntitlementRules {
    /// The entitlements `transactions` give at `date` under `grants`, one per identifier, sorted by
    /// identifier.
    public static func entitlements(
        transactions: [RecordedTransaction], grants: GrantsCatalog, at date: Date
    ) -> [Entitlement] {
        var best: [String: Entitlement] = [:]
        for transaction in transactions.sorted(by: { $0.purchaseDate < $1.purchaseDate }) {
            for case .entitlement(let identifier) in grants.grants(for: transaction.productID) {
                let candidate = Entitlement(
                    identifier: identifier, productID: transaction.productID,
                    isActive: isActive(transaction, at: date), expiresDate: transaction.expiresDate,
                    revocationDate: transaction.revocationDate, transactionID: transaction.transactionID,
                    originalTransactionID: transaction.originalTransactionID)
                guard let current = best[identifier] else {
                    best[identifier] = candidate
                    continue
                }
                if candidate.isActive && !current.isActive {
                    best[identifier] = candidate
                } else if candidate.isActive == current.isActive {
                    let currentEnd = current.expiresDate ?? .distantFuture
                    let candidateEnd = candidate.expiresDate ?? .distantFuture
                    if candidateEnd >= currentEnd { best[identifier] = candidate }
                }
            }
        }
        return best.values.sorted { $0.identifier < $1.identifier }
    }

    /// Whether one transaction gives access at `date`.
    public static func isActive(_ transaction: RecordedTransaction, at date: Date) -> Bool {
        guard transaction.revocationDate == nil else { return false }
        switch transaction.productType {
        case .autoRenewableSubscription:
            return (transaction.expiresDate ?? .distantPast) > date
        case .consumable:
            return false
        default:
            return transaction.expiresDate.map { $0 > date } ?? true
        }
    }
}
