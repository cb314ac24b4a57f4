import AppStoreModels
import Foundation
import GRDB

extension SQLiteLedger {
    /// Marks a purchase for the metrics job, inside the write that changed it.
    static func markForMetrics(bundleID: String, _ originalTransactionID: String, _ db: Database) throws {
        try db.run(
            """
            INSERT INTO metric_pending (bundle_id, original_transaction_id) VALUES (?, ?)
            ON CONFLICT (bundle_id, original_transaction_id) DO NOTHING
            """, [bundleID, originalTransactionID])
    }

    public func updateMetrics(limit: Int) async throws -> Int {
        try await write { db in try Self.updateMetrics(limit: limit, settled: true, db) }
    }

    /// One step of the job: claims up to `limit` marked purchases and works them out again.
    ///
    /// Once the ledger is `settled` (``settlePurchaseMetrics()``), only subscriptions are marked
    /// and only their subscription transactions are worked out; purchases of other kinds are kept
    /// in the writes that change them (``PurchaseMetricChanges``). Before, every purchase marked
    /// is worked out as it always was, its record kept in `metric_units`; `onlyKeptInWrite`
    /// claims those purchases alone.
    static func updateMetrics(limit: Int, settled: Bool, onlyKeptInWrite: Bool = false, _ db: Database) throws -> Int {
        let subscription = ProductType.autoRenewableSubscription.rawValue
        let keys = try db.rows(
            """
            DELETE FROM metric_pending WHERE rowid IN (
                SELECT p.rowid FROM metric_pending p
                WHERE ? = 0 OR NOT EXISTS (
                    SELECT 1 FROM transactions t
                    WHERE t.original_transaction_id = p.original_transaction_id AND t.bundle_id = p.bundle_id
                        AND t.product_type = ?)
                LIMIT ?)
            RETURNING bundle_id, original_transaction_id
            """, [onlyKeptInWrite ? 1 : 0, subscription, limit]
        ).map {
            MetricsUpdate.UnitKey(
                bundleID: try $0.value("bundle_id"), originalTransactionID: try $0.value("original_transaction_id"))
        }
        let folded = try perform(MetricStatements.foldChanges(limit: limit * MetricStatements.changesPerPurchase), db)
        guard !keys.isEmpty else { return folded }
        var transactions: [MetricsUpdate.UnitKey: [TransactionRow]] = [:]
        var grace: [MetricsUpdate.UnitKey: [MetricGrace]] = [:]
        var stored: [MetricsUpdate.UnitKey: MetricsUpdate.StoredUnit] = [:]
        // Only subscriptions have grace periods and runs: other purchases skip those statements.
        var subscriptions = Set<MetricsUpdate.UnitKey>()
        for key in keys {
            let arguments: StatementArguments = [key.bundleID, key.originalTransactionID]
            var rows = try TransactionRow.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT \(TransactionRow.selection()) FROM transactions
                        WHERE original_transaction_id = ? AND bundle_id = ?
                        """), arguments: [key.originalTransactionID, key.bundleID])
            if settled { rows.removeAll { PurchaseMetricChanges.keptInWrite(productType: $0.productType) } }
            transactions[key] = rows
            if rows.isEmpty || rows.contains(where: { $0.productType == subscription }) {
                subscriptions.insert(key)
            }
            if subscriptions.contains(key) {
                grace[key] = try db.rows(
                    """
                    SELECT expires_at, period_expires_at FROM metric_grace
                    WHERE bundle_id = ? AND original_transaction_id = ?
                    """, arguments
                ).map {
                    MetricGrace(expiresAt: try $0.value("expires_at"), periodExpiresAt: try $0.value("period_expires_at"))
                }
            }
            if let row = try db.row(
                "SELECT environment, customer, record FROM metric_units WHERE bundle_id = ? AND original_transaction_id = ?",
                arguments)
            {
                stored[key] = MetricsUpdate.StoredUnit(
                    environment: try row.value("environment"), customer: try row.value("customer"),
                    record: try MetricUnitRecord.decode(try row.value("record"), bundleID: key.bundleID))
            }
        }
        var update = MetricsUpdate()
        update.update(keys, transactions: transactions, graceExpiries: grace, stored: stored)
        for write in update.writes {
            let arguments: StatementArguments = [write.key.bundleID, write.key.originalTransactionID]
            if subscriptions.contains(write.key) {
                try db.run("DELETE FROM metric_runs WHERE bundle_id = ? AND original_transaction_id = ?", arguments)
            }
            guard let unit = write.unit else {
                if stored[write.key] != nil {
                    try db.run("DELETE FROM metric_units WHERE bundle_id = ? AND original_transaction_id = ?", arguments)
                }
                continue
            }
            let record = MetricUnitRecord(unit)
            for run in unit.runs {
                try db.run(
                    """
                    INSERT INTO metric_runs (bundle_id, original_transaction_id, environment, kind, start_at, end_at,
                        product_id, storefront, converted)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    arguments + [
                        unit.environment, run.kind.rawValue, run.start, run.end, run.productID, run.storefront,
                        run.converted ? 1 : 0,
                    ])
            }
            if let old = stored[write.key], old.record == record, old.customer == unit.customer,
                old.environment == unit.environment
            {
                continue  // Worked out again to the same record: nothing to write.
            }
            try db.run(
                """
                INSERT INTO metric_units (bundle_id, original_transaction_id, environment, customer, record)
                VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (bundle_id, original_transaction_id) DO UPDATE SET
                    environment = excluded.environment, customer = excluded.customer, record = excluded.record
                """, arguments + [unit.environment, unit.customer, try record.json()])
        }
        try apply(update, settled: settled, db)
        return keys.count + folded
    }

    /// Applies what a write changed in the metrics of purchases kept in the write: the
    /// customers' states now, the rollups' changes as change rows the job folds
    /// (``MetricRollupTarget/changes``).
    static func apply(_ changes: PurchaseMetricChanges, _ db: Database) throws {
        guard !changes.isEmpty else { return }
        try apply(changes.update, settled: true, into: .changes, db)
    }

    /// Brings the customers a step changed up to date, then adds the step's changes to
    /// `metric_days` and `metric_cohorts`, in key order.
    private static func apply(
        _ step: MetricsUpdate, settled: Bool, into target: MetricRollupTarget = .rollups, _ db: Database
    ) throws {
        var update = step
        for customer in update.customers.keys.sorted() {
            let arguments: StatementArguments = [customer.bundleID, customer.environment, customer.customer]
            let stored = try db.row(
                "SELECT state FROM metric_customers WHERE bundle_id = ? AND environment = ? AND customer = ?", arguments
            ).map { try MetricCustomerState.decode(try $0.value("state")) }
            var state: MetricCustomerState?
            if let decided = update.update(customer: customer, stored: stored) {
                state = decided
            } else {
                var purchases: [String: MetricUnitRecord] = [:]
                if settled {
                    purchases = PurchaseMetricChanges.records(
                        of: try customerTransactions(customer, db), bundleID: customer.bundleID)
                }
                for row in try db.rows(
                    """
                    SELECT original_transaction_id, record FROM metric_units
                    WHERE bundle_id = ? AND environment = ? AND customer = ?
                    """, arguments)
                {
                    purchases[try row.value("original_transaction_id")] = try MetricUnitRecord.decode(
                        try row.value("record"), bundleID: customer.bundleID)
                }
                state = update.update(customer: customer, stored: stored, purchases: purchases)
            }
            guard state != stored else { continue }
            if let state {
                try db.run(
                    """
                    INSERT INTO metric_customers (bundle_id, environment, customer, state) VALUES (?, ?, ?, ?)
                    ON CONFLICT (bundle_id, environment, customer) DO UPDATE SET state = excluded.state
                    """, arguments + [try state.json()])
            } else {
                try db.run(
                    "DELETE FROM metric_customers WHERE bundle_id = ? AND environment = ? AND customer = ?", arguments)
            }
        }
        // Each rollup's rows with one statement (a few hundred at a time), in key order.
        let dayColumns = MetricStatements.dayKeys + MetricStatements.dayColumns
        for rows in update.change.sortedDays.chunked(500) {
            try db.run(
                """
                INSERT INTO \(target.dayTable) (\(dayColumns.joined(separator: ", ")))
                VALUES \(Array(repeating: "(\(Database.placeholders(dayColumns.count)))", count: rows.count).joined(separator: ", "))
                \(target.dayConflict)
                """,
                StatementArguments(
                    rows.flatMap { key, counts -> [any DatabaseValueConvertible] in
                        [key.bundleID, key.environment, key.day, key.productID, key.storefront, key.currency] + counts.values
                    }))
        }
        for rows in update.change.sortedCohorts.chunked(500) {
            try db.run(
                """
                INSERT INTO \(target.cohortTable) (\((MetricStatements.cohortKeys + ["value"]).joined(separator: ", ")))
                VALUES \(Array(repeating: "(?, ?, ?, ?, ?, ?, ?)", count: rows.count).joined(separator: ", "))
                \(target.cohortConflict)
                """,
                StatementArguments(
                    rows.flatMap { key, value -> [any DatabaseValueConvertible] in
                        [key.bundleID, key.environment, key.kind, key.cohort, key.offset, key.currency, value]
                    }))
        }
    }

    /// The transactions of purchases kept in the write that belong to `customer`
    /// (``PurchaseMetricChanges/owner(of:)``).
    private static func customerTransactions(_ customer: MetricsUpdate.CustomerKey, _ db: Database) throws
        -> [TransactionRow]
    {
        let (owner, unowned) = PurchaseMetricChanges.owner(of: customer)
        let subscription = ProductType.autoRenewableSubscription.rawValue
        var rows = try TransactionRow.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT \(TransactionRow.selection()) FROM transactions
                    WHERE bundle_id = ? AND app_user_id = ? AND environment = ? AND product_type <> ?
                    """), arguments: [customer.bundleID, owner, customer.environment, subscription])
        if let unowned {
            rows += try TransactionRow.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT \(TransactionRow.selection()) FROM transactions
                        WHERE bundle_id = ? AND original_transaction_id = ? AND app_user_id IS NULL
                            AND environment = ? AND product_type <> ?
                        """), arguments: [customer.bundleID, unowned, customer.environment, subscription])
        }
        return rows
    }

    /// Brings a ledger whose job worked out every kind of purchase to the state where purchases
    /// other than subscriptions are kept in their writes: the purchases of those kinds still marked
    /// are worked out as before, then their `metric_units` rows (each now what the rollups hold of
    /// it) are dropped. Done once, after migrating, before the first write; later calls return at once.
    func settlePurchaseMetrics() async throws {
        let pass = PurchaseMetricChanges.settlePass
        guard
            try await writer.read({ db in
                try db.row("SELECT finished_at FROM ledger_backfills WHERE name = ?", [pass]).map {
                    try $0.value("finished_at", Int64?.self) == nil
                } ?? false
            })
        else { return }
        // Part of migrating: written as the migrations are, not through the group commit.
        while try await writer.write({ db in try Self.updateMetrics(limit: 500, settled: false, onlyKeptInWrite: true, db) })
            > 0
        {}
        try await writer.write { db in
            _ = try db.rows(PurchaseMetricChanges.dropSettledUnits)
            try db.run(
                "UPDATE ledger_backfills SET finished_at = ? WHERE name = ?", [LedgerTime.milliseconds(Date()), pass])
        }
    }

    public func metrics(
        bundleID: String, environment: AppStoreEnvironment, days: ClosedRange<Int>, now: Date
    ) async throws -> MetricsReading {
        try await read { db in
            let sums = MetricStatements.dayColumns.map { "SUM(\($0)) AS \($0)" }.joined(separator: ", ")
            let before = try db.rows(
                """
                SELECT product_id, storefront, currency, \(sums) FROM metric_days
                WHERE bundle_id = ? AND environment = ? AND day < ?
                GROUP BY product_id, storefront, currency
                """, [bundleID, environment.rawValue, days.lowerBound]
            ).map { try Self.metricDay($0, day: days.lowerBound - 1) }.filter { !$0.counts.isZero }
            let rows = try db.rows(
                """
                SELECT day, product_id, storefront, currency, \(MetricStatements.dayColumns.joined(separator: ", "))
                FROM metric_days WHERE bundle_id = ? AND environment = ? AND day BETWEEN ? AND ?
                ORDER BY day, product_id, storefront, currency
                """, [bundleID, environment.rawValue, days.lowerBound, days.upperBound]
            ).map { try Self.metricDay($0, day: $0.value("day")) }.filter { !$0.counts.isZero }
            let cohorts = try db.rows(
                """
                SELECT kind, cohort, month_offset, currency, value FROM metric_cohorts
                WHERE bundle_id = ? AND environment = ? AND value <> 0 ORDER BY kind, cohort, month_offset, currency
                """, [bundleID, environment.rawValue]
            ).compactMap { row -> MetricCohortValue? in
                guard let kind = MetricCohortValue.Kind(rawValue: try row.value("kind")) else { return nil }
                return MetricCohortValue(
                    kind: kind, cohort: try row.value("cohort"), offset: try row.value("month_offset"),
                    currency: try row.value("currency"), value: try row.value("value"))
            }
            var pending: [MetricCount] = []
            for row in try db.rows(
                """
                SELECT start_at / \(DailyFigures.dayLength) AS day, product_id, storefront, COUNT(*) AS trials
                FROM metric_runs
                WHERE bundle_id = ? AND environment = ? AND kind = 'trial' AND end_at > ? AND converted = 0
                    AND start_at >= ? AND start_at < ?
                GROUP BY day, product_id, storefront ORDER BY day, product_id, storefront
                """,
                [
                    bundleID, environment.rawValue, LedgerTime.milliseconds(now),
                    Int64(days.lowerBound) * DailyFigures.dayLength, Int64(days.upperBound + 1) * DailyFigures.dayLength,
                ])
            {
                pending.append(
                    MetricCount(
                        day: try row.value("day"), productID: try row.value("product_id"),
                        storefront: try row.value("storefront"), count: try row.value("trials")))
            }
            return MetricsReading(before: before, days: rows, cohorts: cohorts, pendingTrials: pending)
        }
    }

    static func metricDay(_ row: Row, day: Int) throws -> MetricDay {
        MetricDay(
            day: day, productID: try row.value("product_id"), storefront: try row.value("storefront"),
            currency: try row.value("currency"),
            counts: MetricCounts(values: try MetricStatements.dayColumns.map { try row.value($0, Int64?.self) ?? 0 }))
    }

    public func churnedSubscriptions(
        bundleID: String, environment: AppStoreEnvironment, periods: [MetricPeriod]
    ) async throws -> [[MetricCount]] {
        try await read { db in
            try periods.map { period in
                let (before, last) = MetricStatements.churnInstants(period)
                return try db.rows(
                    MetricStatements.churn(placeholders: (1...5).map { "?\($0)" }),
                    [bundleID, environment.rawValue, before, last, last]
                ).map {
                    MetricCount(
                        productID: try $0.value("product_id"), storefront: try $0.value("storefront"),
                        count: try $0.value("churned"))
                }
            }
        }
    }
}

extension Array {
    /// The elements in consecutive slices of at most `size`.
    fileprivate func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
