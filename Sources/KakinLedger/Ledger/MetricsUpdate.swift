import Foundation

/// One step of bringing the subscription metrics up to date, the same on both engines: the
/// subscriptions claimed from `metric_pending` are worked out again from their transactions,
/// and the difference from what each contributed before is added to the rollups, with their
/// owners' customer figures, in the database transaction that claimed them.
struct MetricsUpdate: Sendable {
    /// A claimed subscription: an app's original transaction ID.
    struct UnitKey: Hashable, Sendable, Comparable {
        var bundleID: String
        var originalTransactionID: String

        static func < (lhs: Self, rhs: Self) -> Bool {
            (lhs.bundleID, lhs.originalTransactionID) < (rhs.bundleID, rhs.originalTransactionID)
        }
    }

    /// A customer of an app in one environment.
    struct CustomerKey: Hashable, Sendable, Comparable {
        var bundleID: String
        var environment: String
        var customer: String

        static func < (lhs: Self, rhs: Self) -> Bool {
            (lhs.bundleID, lhs.environment, lhs.customer) < (rhs.bundleID, rhs.environment, rhs.customer)
        }
    }

    /// What the ledger held for a subscription before this step.
    struct StoredUnit: Sendable {
        var environment: String
        var customer: String
        var record: MetricUnitRecord
    }

    /// How a subscription's rows change.
    struct UnitWrite: Sendable {
        var key: UnitKey
        /// The new record; `nil` removes it (no transaction holds that ID any more).
        var unit: MetricUnit?
    }

    /// The rollups' changes, summed over the step, written in key order at its end.
    private(set) var change = MetricContributions()
    private(set) var writes: [UnitWrite] = []
    /// The customers whose figures must be worked out again: the owners before and after.
    private(set) var customers = Set<CustomerKey>()

    /// Works out each claimed subscription again.
    mutating func update(
        _ keys: [UnitKey], transactions: [UnitKey: [TransactionRow]], graceExpiries: [UnitKey: [MetricGrace]],
        stored: [UnitKey: StoredUnit]
    ) {
        for key in keys.sorted() {
            let rows = transactions[key] ?? []
            let old = stored[key]
            if let old { customers.insert(CustomerKey(bundleID: key.bundleID, environment: old.environment, customer: old.customer)) }
            guard !rows.isEmpty else {
                if let old { change.merge(MetricContributions().difference(from: old.record.contributions)) }
                writes.append(UnitWrite(key: key, unit: nil))
                continue
            }
            let unit = MetricUnit(
                bundleID: key.bundleID, originalTransactionID: key.originalTransactionID,
                transactions: rows.map(MetricTransaction.init), graceExpiries: graceExpiries[key] ?? [])
            change.merge(unit.contributions.difference(from: old?.record.contributions ?? MetricContributions()))
            customers.insert(CustomerKey(bundleID: key.bundleID, environment: unit.environment, customer: unit.customer))
            writes.append(UnitWrite(key: key, unit: unit))
        }
    }

    /// Works out a customer's figures again from the records of all their subscriptions (as this
    /// step leaves them) and what the customer contributed before.
    mutating func update(customer: CustomerKey, units: [MetricUnitRecord], stored: MetricContributions?) -> MetricContributions {
        let figures = MetricCustomer(
            bundleID: customer.bundleID, environment: customer.environment,
            units: units.map { ($0.firstPayment, $0.monthlyNet) }
        ).contributions
        change.merge(figures.difference(from: stored ?? MetricContributions()))
        return figures
    }
}

/// The statements both engines run to keep the metrics: SQLite with `?` placeholders, PostgreSQL
/// with `$n`.
enum MetricStatements {
    /// How many subscriptions one step claims.
    static let batch = 200

    static let dayColumns = MetricColumn.allCases.map(\.rawValue)

    /// Adds to a `metric_days` row, creating it when missing.
    static let addDayConflict =
        "ON CONFLICT (bundle_id, environment, day, product_id, storefront, currency) DO UPDATE SET "
        + dayColumns.map { "\($0) = metric_days.\($0) + excluded.\($0)" }.joined(separator: ", ")

    static let addCohortConflict = """
        ON CONFLICT (bundle_id, environment, kind, cohort, month_offset, currency) DO UPDATE SET
            value = metric_cohorts.value + excluded.value
        """
}

extension MetricStatements {
    /// The instants churn compares: the last before the period and the period's last.
    static func churnInstants(_ period: MetricPeriod) -> (before: Int64, last: Int64) {
        (LedgerTime.milliseconds(period.start) - 1, LedgerTime.milliseconds(period.end) - 1)
    }

    /// Counts the periods of paid service covering the instant before a period that end by its
    /// last instant, of subscriptions with no period of paid service covering that last instant.
    /// The placeholders stand for: the app, the environment, the instant before, the last instant
    /// (twice).
    static func churn(placeholders p: [String]) -> String {
        """
        SELECT r.product_id, r.storefront, COUNT(*) AS churned FROM metric_runs r
        WHERE r.bundle_id = \(p[0]) AND r.environment = \(p[1]) AND r.kind = 'paid'
            AND r.end_at > \(p[2]) AND r.end_at <= \(p[3]) AND r.start_at <= \(p[2])
            AND NOT EXISTS (
                SELECT 1 FROM metric_runs n
                WHERE n.bundle_id = r.bundle_id AND n.original_transaction_id = r.original_transaction_id
                    AND n.kind = 'paid' AND n.start_at <= \(p[4]) AND n.end_at > \(p[4]))
        GROUP BY r.product_id, r.storefront ORDER BY r.product_id, r.storefront
        """
    }
}
