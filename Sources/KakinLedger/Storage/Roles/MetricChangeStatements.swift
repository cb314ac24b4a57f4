/// Where a write adds what it changes in the rollups (`metric_days`, `metric_cohorts`).
///
/// The rollups hold one row per app, day, product, storefront and currency: every purchase of a
/// day adds to the same few rows, and a writer that added to one would hold it until it commits,
/// so that concurrent writers queued behind each other. The writes that record, revoke,
/// reinstate or move purchases append their changes as rows of their own instead
/// (``changes``), which no two writers share; the metrics job, which servers take turns to run,
/// adds to the rollups itself (``rollups``) and folds the change rows into them in batches
/// (``MetricStatements/foldChanges(limit:)``).
enum MetricRollupTarget: Sendable {
    case rollups
    case changes

    var dayTable: String { self == .rollups ? "metric_days" : "metric_day_changes" }
    var cohortTable: String { self == .rollups ? "metric_cohorts" : "metric_cohort_changes" }
    /// What follows the insert of day rows: adding to a row already there, or nothing.
    var dayConflict: String { self == .rollups ? MetricStatements.addDayConflict : "" }
    /// What follows the insert of cohort rows: adding to a row already there, or nothing.
    var cohortConflict: String { self == .rollups ? MetricStatements.addCohortConflict : "" }
}

extension MetricStatements {
    /// How many change rows of each kind a step of the job folds for each purchase it may work
    /// out (its `limit`): the rows are small, and each is one sum.
    static let changesPerPurchase = 20

    /// The columns that key a `metric_days` row.
    static let dayKeys = ["bundle_id", "environment", "day", "product_id", "storefront", "currency"]
    /// The columns that key a `metric_cohorts` row.
    static let cohortKeys = ["bundle_id", "environment", "kind", "cohort", "month_offset", "currency"]

    /// One batch of the change rows folded into the rollups: up to `limit` rows of each kind,
    /// oldest first, summed per rollup row and added in key order, then deleted. Its answer is
    /// how many change rows it folded.
    ///
    /// The rows are picked by id and only this step deletes them (a step runs under the metrics
    /// job's lock), so what is added is exactly what is deleted, whatever writers commit
    /// meanwhile.
    static func foldChanges(limit: Int) -> LedgerTransaction<Int> {
        .run([
            "SELECT id AS value FROM metric_day_changes ORDER BY id LIMIT \(limit)",
            "SELECT id AS value FROM metric_cohort_changes ORDER BY id LIMIT \(limit)",
        ]) { rows in
            let days = try rows[0].decode(LedgerColumn<Int64>.self).map(\.value)
            let cohorts = try rows[1].decode(LedgerColumn<Int64>.self).map(\.value)
            var statements: [LedgerSQL] = []
            if !days.isEmpty {
                statements += fold(
                    days, from: "metric_day_changes", into: "metric_days", keys: dayKeys, sums: dayColumns,
                    conflict: addDayConflict)
            }
            if !cohorts.isEmpty {
                statements += fold(
                    cohorts, from: "metric_cohort_changes", into: "metric_cohorts", keys: cohortKeys, sums: ["value"],
                    conflict: addCohortConflict)
            }
            return .run(statements) { _ in .done(days.count + cohorts.count) }
        }
    }

    /// Adds the change rows `ids` of `changes` to `rollup`, summed per key, then deletes them.
    private static func fold(
        _ ids: [Int64], from changes: String, into rollup: String, keys: [String], sums: [String], conflict: String
    ) -> [LedgerSQL] {
        let keyList = keys.joined(separator: ", ")
        return [
            """
            INSERT INTO \(unescaped: rollup) (\(unescaped: keyList), \(unescaped: sums.joined(separator: ", ")))
            SELECT \(unescaped: keyList), \(unescaped: sums.map { "SUM(\($0))" }.joined(separator: ", "))
            FROM \(unescaped: changes) WHERE id IN (\(list: ids))
            GROUP BY \(unescaped: keyList) ORDER BY \(unescaped: keyList)
            \(unescaped: conflict)
            """,
            "DELETE FROM \(unescaped: changes) WHERE id IN (\(list: ids))",
        ]
    }
}

/// How one of a customer's purchases changed, as a write (or a step of the job) appends it to
/// `metric_customer_changes`: the customer figures it concerns, worked out by the job.
///
/// A customer's figures (their first payment, and revenue by month of their cohort) depend on
/// all their purchases, so they are not worked out in the write that changes one: the write
/// appends what its purchases contributed to their owners before and after (``record`` JSON,
/// first payment and net revenue by month only), and the job works out each customer's figures
/// from their stored state and every change appended since, in order.
struct MetricCustomerChangeRow: Codable, Sendable {
    var id: Int64?
    var bundleID: String
    var environment: String
    var customer: String
    var purchase: String
    var oldRecord: String?
    var newRecord: String?

    enum CodingKeys: String, CodingKey {
        case id, bundleID = "bundle_id", environment, customer, purchase, oldRecord = "old_record", newRecord = "new_record"
    }

    var key: MetricsUpdate.CustomerKey {
        MetricsUpdate.CustomerKey(bundleID: bundleID, environment: environment, customer: customer)
    }

    /// The columns a write fills.
    static let columns = ["bundle_id", "environment", "customer", "purchase", "old_record", "new_record"]

    /// The rows of `update`'s customers' changes, in key order.
    static func rows(_ update: MetricsUpdate) throws -> [Self] {
        /// What a customer's figures read of a purchase's record.
        func json(_ record: MetricUnitRecord?) throws -> String? {
            try record.map {
                try MetricUnitRecord(contributions: MetricContributions(), firstPayment: $0.firstPayment, monthlyNet: $0.monthlyNet)
                    .json()
            }
        }
        return try update.customers.keys.sorted().flatMap { key in
            try (update.customers[key] ?? []).map {
                Self(
                    id: nil, bundleID: key.bundleID, environment: key.environment, customer: key.customer,
                    purchase: $0.purchase, oldRecord: try json($0.old), newRecord: try json($0.new))
            }
        }
    }

    /// The customers' changes `rows` hold, in id order; a purchase changed several times comes
    /// to one change, from its first record before to its last after.
    static func changes(_ rows: [Self]) throws -> [MetricsUpdate.CustomerKey: [MetricsUpdate.PurchaseChange]] {
        var changes: [MetricsUpdate.CustomerKey: [MetricsUpdate.PurchaseChange]] = [:]
        for row in rows.sorted(by: { ($0.id ?? 0) < ($1.id ?? 0) }) {
            let (old, new) = (
                try row.oldRecord.map { try MetricUnitRecord.decode($0, bundleID: row.bundleID) },
                try row.newRecord.map { try MetricUnitRecord.decode($0, bundleID: row.bundleID) }
            )
            if let index = changes[row.key]?.firstIndex(where: { $0.purchase == row.purchase }) {
                changes[row.key]?[index].new = new
            } else {
                changes[row.key, default: []].append(MetricsUpdate.PurchaseChange(purchase: row.purchase, old: old, new: new))
            }
        }
        return changes.compactMapValues { list in
            let changed = list.filter { $0.old != $0.new }
            return changed.isEmpty ? nil : changed
        }
    }
}

extension MetricStatements {
    /// The customers of the oldest `limit` customer changes, in key order.
    static func oldestChangedCustomers(limit: Int) -> LedgerSQL {
        """
        SELECT DISTINCT bundle_id, environment, customer FROM (
            SELECT bundle_id, environment, customer FROM metric_customer_changes ORDER BY id LIMIT \(limit)) AS oldest
        ORDER BY bundle_id, environment, customer
        """
    }

    /// Takes every change appended for `customers` (deletes and returns them).
    static func takeCustomerChanges(of customers: [MetricsUpdate.CustomerKey]) -> LedgerSQL {
        var keys: LedgerSQL = ""
        for (index, key) in customers.enumerated() {
            keys = "\(keys)\(unescaped: index == 0 ? "" : ", ")(\(key.bundleID), \(key.environment), \(key.customer))"
        }
        return """
            DELETE FROM metric_customer_changes WHERE (bundle_id, environment, customer) IN (VALUES \(keys))
            RETURNING id, \(unescaped: MetricCustomerChangeRow.columns.joined(separator: ", "))
            """
    }
}

/// A customer as a statement returns it.
struct MetricCustomerKeyRow: Decodable, Sendable {
    var bundleID: String
    var environment: String
    var customer: String

    enum CodingKeys: String, CodingKey { case bundleID = "bundle_id", environment, customer }

    var key: MetricsUpdate.CustomerKey {
        MetricsUpdate.CustomerKey(bundleID: bundleID, environment: environment, customer: customer)
    }
}
