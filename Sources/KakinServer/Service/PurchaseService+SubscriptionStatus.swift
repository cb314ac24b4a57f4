import AppStoreModels
import Foundation
import KakinLedger

extension PurchaseService {
    /// Whether a transaction of `summary` gives access to `productID` now: as
    /// ``EntitlementRules/isActive(_:renewal:at:)`` says, so that a subscription whose renewal
    /// failed keeps its access (hosted content included) through its grace period. The renewal
    /// state is read only when no transaction of the product is active without it.
    func hasAccess(to productID: String, in summary: CustomerSummary, app: AppConfiguration) async throws -> Bool {
        let now = now()
        let candidates = summary.accessTransactions.filter { $0.productID == productID }
        if candidates.contains(where: { EntitlementRules.isActive($0, at: now) }) { return true }
        let latest = EntitlementRules.latestSubscriptionTransactions(candidates)
        let lapsed = candidates.filter { latest.contains($0.transactionID) && $0.revocationDate == nil }
        guard !lapsed.isEmpty else { return false }
        let renewals = try await purchases.subscriptionRenewals(
            bundleID: app.bundleID, originalTransactionIDs: lapsed.map(\.originalTransactionID))
        return lapsed.contains { EntitlementRules.isActive($0, renewal: renewals[$0.originalTransactionID], at: now) }
    }
}
