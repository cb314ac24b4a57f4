import AppStoreModels
import Foundation

/// The metrics of purchases that are not auto-renewable subscriptions (consumables,
/// non-consumables, non-renewing subscriptions), kept in the write that changes them.
///
/// Such a transaction adds to the rollups on its own, whatever the other transactions of its
/// purchase are: a purchase on its day (price × quantity as revenue), a refund on its revocation's
/// day, and its owner's customer figures (the first paid transaction makes a paying customer; net
/// revenue by month goes to the customer's cohort). So each write that records, revokes, reinstates
/// or moves one applies the difference between what the row contributed before and after, and
/// the metrics job never works such a purchase out again: the job keeps subscriptions only, whose
/// covering periods depend on all their transactions.
///
/// The customer of such a transaction is its owner, or its original transaction ID (prefixed with
/// `#`) while nobody owns it; no `metric_units` row is kept for it: when a customer is worked out
/// again from all their purchases (``MetricsUpdate/update(customer:stored:purchases:)``), these
/// purchases are read from their transactions (``records(of:bundleID:)``).
struct PurchaseMetricChanges: Sendable {
    /// The rollups' and the customers' changes, applied as the job applies its own.
    private(set) var update = MetricsUpdate()

    /// Whether the write changed nothing the metrics read.
    var isEmpty: Bool { update.change.isEmpty && update.customers.isEmpty }

    /// Whether a transaction of `productType` is kept in the write that changes it (everything
    /// but an auto-renewable subscription); otherwise its purchase is marked for the job.
    static func keptInWrite(productType: String) -> Bool {
        productType != ProductType.autoRenewableSubscription.rawValue
    }

    /// A row that changed from `old` to `new` (`nil` for no row), both of one transaction kept in
    /// the write (``keptInWrite(productType:)``). `signed` is what `new`'s signed transaction
    /// holds when the write has it at hand (otherwise it is read from the row's JWS); it serves
    /// `old` too when both hold the same JWS.
    mutating func replace(_ old: TransactionRow?, with new: TransactionRow?, signed: SignedMetricFields? = nil) {
        guard old != new, let row = new ?? old else { return }
        func unit(_ row: TransactionRow?) -> MetricUnit? {
            row.map {
                let known = signed != nil && $0.signedTransaction == new?.signedTransaction ? signed : nil
                return MetricUnit(
                    bundleID: $0.bundleID, originalTransactionID: $0.originalTransactionID,
                    transactions: [MetricTransaction($0, signed: known)], graceExpiries: [])
            }
        }
        let (before, after) = (unit(old), unit(new))
        update.add((after?.contributions ?? MetricContributions()).difference(from: before?.contributions ?? MetricContributions()))
        func owner(_ unit: MetricUnit?) -> (MetricsUpdate.CustomerKey, MetricUnitRecord)? {
            unit.map {
                (MetricsUpdate.CustomerKey(bundleID: row.bundleID, environment: $0.environment, customer: $0.customer),
                 MetricUnitRecord($0))
            }
        }
        update.note(row.originalTransactionID, from: owner(before), to: owner(after))
    }

    /// Rows moved to a new owner from `owner` (a transfer, or an alias taking an anonymous
    /// customer's purchases): those kept in the write move with them.
    mutating func move(_ rows: [TransactionRow], from owner: String?) {
        for row in rows where Self.keptInWrite(productType: row.productType) {
            var before = row
            before.appUserID = owner
            replace(before, with: row)
        }
    }

    /// The records a customer's purchases kept in the write contribute, by original transaction
    /// ID, worked out from the customer's `transactions` of those purchases.
    static func records(of transactions: [TransactionRow], bundleID: String) -> [String: MetricUnitRecord] {
        Dictionary(grouping: transactions.filter { keptInWrite(productType: $0.productType) }, by: \.originalTransactionID)
            .mapValues {
                MetricUnitRecord(
                    MetricUnit(
                        bundleID: bundleID, originalTransactionID: $0[0].originalTransactionID,
                        transactions: $0.map { MetricTransaction($0) }, graceExpiries: []))
            }
    }

    /// Which of a customer's transactions ``records(of:bundleID:)`` reads: those the customer
    /// owns, or for a purchase nobody owns (`#` and its original transaction ID), its transactions
    /// without an owner.
    static func owner(of customer: MetricsUpdate.CustomerKey) -> (appUserID: String?, unowned: String?) {
        guard customer.customer.hasPrefix("#") else { return (customer.customer, nil) }
        return (customer.customer, String(customer.customer.dropFirst()))
    }

    /// The name, in `ledger_backfills`, of the pass that brings a ledger whose job worked out every
    /// kind of purchase to this way of keeping them (each engine's `settlePurchaseMetrics()`).
    static let settlePass = "purchase_metrics_in_write"

    /// Drops the `metric_units` rows of purchases without a subscription transaction: what the
    /// rollups hold of each is what its transactions contribute, as the writes keep it.
    static let dropSettledUnits: LedgerSQL = """
        DELETE FROM metric_units WHERE NOT EXISTS (
            SELECT 1 FROM transactions t
            WHERE t.original_transaction_id = metric_units.original_transaction_id
                AND t.bundle_id = metric_units.bundle_id
                AND t.product_type = \(ProductType.autoRenewableSubscription.rawValue))
        """
}
