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
        try await write { db in try Self.updateMetrics(limit: limit, db) }
    }

    static func updateMetrics(limit: Int, _ db: Database) throws -> Int {
        let keys = try db.rows(
            """
            DELETE FROM metric_pending WHERE rowid IN (SELECT rowid FROM metric_pending LIMIT ?)
            RETURNING bundle_id, original_transaction_id
            """, [limit]
        ).map {
            MetricsUpdate.UnitKey(
                bundleID: try $0.value("bundle_id"), originalTransactionID: try $0.value("original_transaction_id"))
        }
        guard !keys.isEmpty else { return 0 }
        var transactions: [MetricsUpdate.UnitKey: [TransactionRow]] = [:]
        var grace: [MetricsUpdate.UnitKey: [MetricGrace]] = [:]
        var stored: [MetricsUpdate.UnitKey: MetricsUpdate.StoredUnit] = [:]
        // Only subscriptions have grace periods and runs: other purchases skip those statements.
        var subscriptions = Set<MetricsUpdate.UnitKey>()
        for key in keys {
            let arguments: StatementArguments = [key.bundleID, key.originalTransactionID]
            let rows = try TransactionRow.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT \(TransactionRow.selection()) FROM transactions
                        WHERE original_transaction_id = ? AND bundle_id = ?
                        """), arguments: [key.originalTransactionID, key.bundleID])
            transactions[key] = rows
            if rows.isEmpty || rows.contains(where: { $0.productType == ProductType.autoRenewableSubscription.rawValue }) {
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
                try db.run("DELETE FROM metric_units WHERE bundle_id = ? AND original_transaction_id = ?", arguments)
                continue
            }
            let record = MetricUnitRecord(unit)
            if let old = stored[write.key], old.record == record, old.customer == unit.customer,
                old.environment == unit.environment, !subscriptions.contains(write.key)
            {
                continue  // Worked out again to the same: nothing to write.
            }
            try db.run(
                """
                INSERT INTO metric_units (bundle_id, original_transaction_id, environment, customer, record)
                VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (bundle_id, original_transaction_id) DO UPDATE SET
                    environment = excluded.environment, customer = excluded.customer, record = excluded.record
                """, arguments + [unit.environment, unit.customer, try record.json()])
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
        }
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
        for (key, counts) in update.change.sortedDays {
            try db.run(
                """
                INSERT INTO metric_days (bundle_id, environment, day, product_id, storefront, currency, \
                \(MetricStatements.dayColumns.joined(separator: ", ")))
                VALUES (?, ?, ?, ?, ?, ?, \(Database.placeholders(MetricStatements.dayColumns.count)))
                \(MetricStatements.addDayConflict)
                """,
                StatementArguments([
                    key.bundleID, key.environment, key.day, key.productID, key.storefront, key.currency,
                ] as [any DatabaseValueConvertible]) + StatementArguments(counts.values))
        }
        for (key, value) in update.change.sortedCohorts {
            try db.run(
                """
                INSERT INTO metric_cohorts (bundle_id, environment, kind, cohort, month_offset, currency, value)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                \(MetricStatements.addCohortConflict)
                """, [key.bundleID, key.environment, key.kind, key.cohort, key.offset, key.currency, value])
        }
        return keys.count
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
