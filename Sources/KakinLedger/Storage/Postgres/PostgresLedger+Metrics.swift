import AppStoreModels
import Foundation
import PostgresNIO

/// The subscription metrics on PostgreSQL: the job that keeps the rollups, and their reads.
extension PostgresLedger {
    /// One step of the job in one transaction, which holds a transaction-level advisory lock:
    /// servers sharing the database take turns, so that a customer's figures are worked out
    /// from every change committed before. A step still running four connection waits after it
    /// started (a database gone away mid-step) fails, its connection closed.
    public func updateMetrics(limit: Int) async throws -> Int {
        do {
            return try await lease(limit: connectionWait * 4) { connection in
                try await connection.withTransaction(logger: Self.quiet) { connection in
                    try await Self.updateMetrics(limit: limit, settled: true, on: connection)
                }
            }
        } catch { throw Self.ledgerError(error) }
    }

    /// One step of the job (see the SQLite engine's for `settled` and `onlyKeptInWrite`).
    static func updateMetrics(
        limit: Int, settled: Bool, onlyKeptInWrite: Bool = false, on connection: PostgresConnection
    ) async throws -> Int {
        _ = try await connection.rows(
            "SELECT pg_advisory_xact_lock(\(unescaped: Lock.scope), \(Lock.metrics.rawValue))")
        let subscription = ProductType.autoRenewableSubscription.rawValue
        let keys = try await connection.rows(
            """
            DELETE FROM metric_pending WHERE (bundle_id, original_transaction_id) IN (
                SELECT p.bundle_id, p.original_transaction_id FROM metric_pending p
                WHERE NOT \(onlyKeptInWrite) OR NOT EXISTS (
                    SELECT 1 FROM transactions t
                    WHERE t.original_transaction_id = p.original_transaction_id AND t.bundle_id = p.bundle_id
                        AND t.product_type = \(subscription))
                LIMIT \(Int64(limit)) FOR UPDATE SKIP LOCKED)
            RETURNING bundle_id, original_transaction_id
            """
        ).map {
            let (bundleID, original) = try $0.decode((String, String).self)
            return MetricsUpdate.UnitKey(bundleID: bundleID, originalTransactionID: original)
        }
        let folded = try await perform(
            MetricStatements.foldChanges(limit: limit * MetricStatements.changesPerPurchase), on: connection)
        guard !keys.isEmpty else { return folded }
        let (bundles, originals) = (keys.map(\.bundleID), keys.map(\.originalTransactionID))
        var transactions: [MetricsUpdate.UnitKey: [TransactionRow]] = [:]
        for row in try await connection.rows(
            """
            SELECT \(unescaped: TransactionRow.selection(table: "t."))
            FROM unnest(\(bundles)::TEXT[], \(originals)::TEXT[]) AS k(bundle_id, original)
            JOIN transactions t ON t.original_transaction_id = k.original AND t.bundle_id = k.bundle_id
            """)
        {
            let transaction = try transactionRow(row)
            if settled && PurchaseMetricChanges.keptInWrite(productType: transaction.productType) { continue }
            transactions[
                MetricsUpdate.UnitKey(
                    bundleID: transaction.bundleID, originalTransactionID: transaction.originalTransactionID),
                default: []
            ].append(transaction)
        }
        var grace: [MetricsUpdate.UnitKey: [MetricGrace]] = [:]
        for row in try await connection.rows(
            """
            SELECT g.bundle_id, g.original_transaction_id, g.expires_at, g.period_expires_at
            FROM unnest(\(bundles)::TEXT[], \(originals)::TEXT[]) AS k(bundle_id, original)
            JOIN metric_grace g ON g.bundle_id = k.bundle_id AND g.original_transaction_id = k.original
            """)
        {
            let (bundleID, original, expires, period) = try row.decode((String, String, Int64, Int64?).self)
            grace[MetricsUpdate.UnitKey(bundleID: bundleID, originalTransactionID: original), default: []].append(
                MetricGrace(expiresAt: expires, periodExpiresAt: period))
        }
        var stored: [MetricsUpdate.UnitKey: MetricsUpdate.StoredUnit] = [:]
        for row in try await connection.rows(
            """
            SELECT u.bundle_id, u.original_transaction_id, u.environment, u.customer, u.record
            FROM unnest(\(bundles)::TEXT[], \(originals)::TEXT[]) AS k(bundle_id, original)
            JOIN metric_units u ON u.bundle_id = k.bundle_id AND u.original_transaction_id = k.original
            """)
        {
            let (bundleID, original, environment, customer, record) = try row.decode(
                (String, String, String, String, String).self)
            stored[MetricsUpdate.UnitKey(bundleID: bundleID, originalTransactionID: original)] =
                MetricsUpdate.StoredUnit(
                    environment: environment, customer: customer,
                    record: try MetricUnitRecord.decode(record, bundleID: bundleID))
        }
        var update = MetricsUpdate()
        update.update(keys, transactions: transactions, graceExpiries: grace, stored: stored)
        try await writeUnits(update.writes, stored: stored, on: connection)
        try await apply(update, settled: settled, on: connection)
        return keys.count + folded
    }

    /// Applies what a write (a group's ingests, on PostgreSQL) changed in the metrics of purchases
    /// kept in the write, once, at its end: the customers' states now, the rollups' changes as
    /// change rows the job folds (``MetricRollupTarget/changes``).
    /// The write's changes to `daily_figures` go in the same last statement, so that the rows
    /// of figures many writers share are held locked the shortest time, one round trip less.
    static func apply(
        _ changes: PurchaseMetricChanges, adding figures: FigureChanges = FigureChanges(),
        on connection: PostgresConnection
    ) async throws {
        guard !changes.isEmpty else { return try await add(figures, on: connection) }
        try await apply(changes.update, settled: true, into: .changes, figures: figures, on: connection)
    }

    /// Brings the customers a step changed up to date, then adds the step's changes to
    /// `metric_days` and `metric_cohorts`, in key order.
    ///
    /// Writes of purchases and the job both change customers: each takes a transaction-level
    /// advisory lock per customer it changes, in key order, before it reads their state.
    private static func apply(
        _ step: MetricsUpdate, settled: Bool, into target: MetricRollupTarget = .rollups,
        figures: FigureChanges = FigureChanges(), on connection: PostgresConnection
    ) async throws {
        var update = step
        let customers = update.customers.keys.sorted()
        var storedCustomers: [MetricsUpdate.CustomerKey: MetricCustomerState] = [:]
        if !customers.isEmpty {
            for row in try await connection.rows(
                """
                WITH k AS MATERIALIZED (
                    SELECT bundle_id, environment, customer,
                        pg_advisory_xact_lock(\(unescaped: Lock.customerScope),
                            hashtext(bundle_id || chr(10) || environment || chr(10) || customer)) AS locked
                    FROM (SELECT * FROM unnest(\(customers.map(\.bundleID))::TEXT[], \(customers.map(\.environment))::TEXT[],
                        \(customers.map(\.customer))::TEXT[]) WITH ORDINALITY AS u(bundle_id, environment, customer, n)
                        ORDER BY n) AS ordered)
                SELECT c.bundle_id, c.environment, c.customer, c.state
                FROM k JOIN metric_customers c
                    ON c.bundle_id = k.bundle_id AND c.environment = k.environment AND c.customer = k.customer
                """)
            {
                let (bundleID, environment, customer, state) = try row.decode((String, String, String, String).self)
                storedCustomers[MetricsUpdate.CustomerKey(bundleID: bundleID, environment: environment, customer: customer)] =
                    try MetricCustomerState.decode(state)
            }
        }
        var states: [MetricsUpdate.CustomerKey: MetricCustomerState?] = [:]
        var recompute: [MetricsUpdate.CustomerKey] = []
        for customer in customers {
            if let decided = update.update(customer: customer, stored: storedCustomers[customer]) {
                states[customer] = .some(decided)
            } else {
                recompute.append(customer)
            }
        }
        if !recompute.isEmpty {
            var purchases: [MetricsUpdate.CustomerKey: [String: MetricUnitRecord]] = [:]
            if settled {
                for customer in recompute {
                    purchases[customer] = PurchaseMetricChanges.records(
                        of: try await customerTransactions(customer, on: connection), bundleID: customer.bundleID)
                }
            }
            for row in try await connection.rows(
                """
                SELECT u.bundle_id, u.environment, u.customer, u.original_transaction_id, u.record
                FROM unnest(\(recompute.map(\.bundleID))::TEXT[], \(recompute.map(\.environment))::TEXT[],
                    \(recompute.map(\.customer))::TEXT[]) AS k(bundle_id, environment, customer)
                JOIN metric_units u ON u.bundle_id = k.bundle_id AND u.environment = k.environment
                    AND u.customer = k.customer
                """)
            {
                let (bundleID, environment, customer, original, record) = try row.decode(
                    (String, String, String, String, String).self)
                purchases[MetricsUpdate.CustomerKey(bundleID: bundleID, environment: environment, customer: customer), default: [:]][
                    original] = try MetricUnitRecord.decode(record, bundleID: bundleID)
            }
            for customer in recompute {
                states[customer] = .some(
                    update.update(customer: customer, stored: storedCustomers[customer], purchases: purchases[customer] ?? [:]))
            }
        }
        var kept: [(key: MetricsUpdate.CustomerKey, json: String)] = []
        var emptied: [MetricsUpdate.CustomerKey] = []
        for customer in customers {
            let state = states[customer] ?? nil
            guard state != storedCustomers[customer] else { continue }
            if let state { kept.append((customer, try state.json())) } else { emptied.append(customer) }
        }
        if !emptied.isEmpty {
            _ = try await connection.rows(
                """
                DELETE FROM metric_customers c
                USING unnest(\(emptied.map(\.bundleID))::TEXT[], \(emptied.map(\.environment))::TEXT[],
                    \(emptied.map(\.customer))::TEXT[]) AS k(bundle_id, environment, customer)
                WHERE c.bundle_id = k.bundle_id AND c.environment = k.environment AND c.customer = k.customer
                """)
        }
        try await write(customers: kept, update.change, into: target, figures: figures, on: connection)
    }

    /// The transactions of purchases kept in the write that belong to `customer`
    /// (``PurchaseMetricChanges/owner(of:)``).
    private static func customerTransactions(
        _ customer: MetricsUpdate.CustomerKey, on connection: PostgresConnection
    ) async throws -> [TransactionRow] {
        let (owner, unowned) = PurchaseMetricChanges.owner(of: customer)
        let subscription = ProductType.autoRenewableSubscription.rawValue
        return try await connection.rows(
            """
            SELECT \(unescaped: TransactionRow.selection()) FROM transactions
            WHERE bundle_id = \(customer.bundleID) AND environment = \(customer.environment)
                AND product_type <> \(subscription)
                AND (app_user_id = \(owner) OR (app_user_id IS NULL AND original_transaction_id = \(unowned)))
            """
        ).map(transactionRow)
    }

    /// Brings a ledger whose job worked out every kind of purchase to the state where purchases
    /// other than subscriptions are kept in their writes (see the SQLite engine's). Run while
    /// migrating, holding the migrations' lock, so no replica writes meanwhile.
    static func settlePurchaseMetrics(on connection: PostgresConnection) async throws {
        let pass = PurchaseMetricChanges.settlePass
        let unfinished = try await connection.rows(
            "SELECT after_key FROM ledger_backfills WHERE name = \(pass) AND finished_at IS NULL")
        guard !unfinished.isEmpty else { return }
        while try await connection.withTransaction(logger: quiet, { connection in
            try await updateMetrics(limit: 500, settled: false, onlyKeptInWrite: true, on: connection)
        }) > 0 {}
        try await connection.withTransaction(logger: quiet) { connection in
            _ = try await connection.rows(PurchaseMetricChanges.dropSettledUnits.postgresQuery)
            _ = try await connection.rows(
                "UPDATE ledger_backfills SET finished_at = \(LedgerTime.milliseconds(Date())) WHERE name = \(pass)")
        }
    }

    /// Replaces the stored records and runs of the subscriptions worked out again; a record
    /// worked out again to what is stored is not written.
    private static func writeUnits(
        _ writes: [MetricsUpdate.UnitWrite], stored: [MetricsUpdate.UnitKey: MetricsUpdate.StoredUnit],
        on connection: PostgresConnection
    ) async throws {
        let (bundles, originals) = (writes.map(\.key.bundleID), writes.map(\.key.originalTransactionID))
        _ = try await connection.rows(
            """
            DELETE FROM metric_runs r USING unnest(\(bundles)::TEXT[], \(originals)::TEXT[]) AS k(bundle_id, original)
            WHERE r.bundle_id = k.bundle_id AND r.original_transaction_id = k.original
            """)
        let removed = writes.filter { $0.unit == nil && stored[$0.key] != nil }
        if !removed.isEmpty {
            _ = try await connection.rows(
                """
                DELETE FROM metric_units u
                USING unnest(\(removed.map(\.key.bundleID))::TEXT[], \(removed.map(\.key.originalTransactionID))::TEXT[])
                    AS k(bundle_id, original)
                WHERE u.bundle_id = k.bundle_id AND u.original_transaction_id = k.original
                """)
        }
        var units: (bundles: [String], originals: [String], environments: [String], customers: [String], records: [String]) =
            ([], [], [], [], [])
        var runs: (bundles: [String], originals: [String], environments: [String], kinds: [String], starts: [Int64],
            ends: [Int64], products: [String], storefronts: [String], converted: [Int32]) = ([], [], [], [], [], [], [], [], [])
        for write in writes {
            guard let unit = write.unit else { continue }
            for run in unit.runs {
                runs.bundles.append(write.key.bundleID)
                runs.originals.append(write.key.originalTransactionID)
                runs.environments.append(unit.environment)
                runs.kinds.append(run.kind.rawValue)
                runs.starts.append(run.start)
                runs.ends.append(run.end)
                runs.products.append(run.productID)
                runs.storefronts.append(run.storefront)
                runs.converted.append(run.converted ? 1 : 0)
            }
            let record = MetricUnitRecord(unit)
            if let old = stored[write.key], old.record == record, old.customer == unit.customer,
                old.environment == unit.environment
            {
                continue  // Worked out again to the same record: nothing to write.
            }
            units.bundles.append(write.key.bundleID)
            units.originals.append(write.key.originalTransactionID)
            units.environments.append(unit.environment)
            units.customers.append(unit.customer)
            units.records.append(try record.json())
        }
        if !units.bundles.isEmpty {
            _ = try await connection.rows(
                """
                INSERT INTO metric_units (bundle_id, original_transaction_id, environment, customer, record)
                SELECT * FROM unnest(\(units.bundles)::TEXT[], \(units.originals)::TEXT[], \(units.environments)::TEXT[],
                    \(units.customers)::TEXT[], \(units.records)::TEXT[])
                ON CONFLICT (bundle_id, original_transaction_id) DO UPDATE SET
                    environment = excluded.environment, customer = excluded.customer, record = excluded.record
                """)
        }
        if !runs.bundles.isEmpty {
            _ = try await connection.rows(
                """
                INSERT INTO metric_runs (bundle_id, original_transaction_id, environment, kind, start_at, end_at,
                    product_id, storefront, converted)
                SELECT * FROM unnest(\(runs.bundles)::TEXT[], \(runs.originals)::TEXT[], \(runs.environments)::TEXT[],
                    \(runs.kinds)::TEXT[], \(runs.starts)::BIGINT[], \(runs.ends)::BIGINT[], \(runs.products)::TEXT[],
                    \(runs.storefronts)::TEXT[], \(runs.converted)::INTEGER[])
                """)
        }
    }

    /// Writes the customers' new states and adds a step's changes to the rollups or appends
    /// them as change rows (`target`), each in key order, with one statement. (A data-modifying
    /// `WITH` the main statement does not read runs after it: every step takes the rows of the
    /// two rollups in the same order.)
    private static func write(
        customers: [(key: MetricsUpdate.CustomerKey, json: String)], _ change: MetricContributions,
        into target: MetricRollupTarget, figures: FigureChanges, on connection: PostgresConnection
    ) async throws {
        let days = change.sortedDays
        let cohorts = change.sortedCohorts
        let figureRows = figures.sorted
        guard !customers.isEmpty || !days.isEmpty || !cohorts.isEmpty || !figureRows.isEmpty else { return }
        let columns = MetricStatements.dayColumns
        var bindings = PostgresBindings(capacity: 17 + columns.count)
        /// Binds an array, and names it as the statement reads it.
        func bind<Element: PostgresArrayEncodable>(_ values: [Element], _ type: String) throws -> String {
            try bindings.append(values)
            return "$\(bindings.count)::\(type)[]"
        }
        let customerArrays = [
            try bind(customers.map(\.key.bundleID), "TEXT"), try bind(customers.map(\.key.environment), "TEXT"),
            try bind(customers.map(\.key.customer), "TEXT"), try bind(customers.map(\.json), "TEXT"),
        ].joined(separator: ", ")
        let dayArrays = (
            [
                try bind(days.map(\.key.bundleID), "TEXT"), try bind(days.map(\.key.environment), "TEXT"),
                try bind(days.map { Int32($0.key.day) }, "INTEGER"), try bind(days.map(\.key.productID), "TEXT"),
                try bind(days.map(\.key.storefront), "TEXT"), try bind(days.map(\.key.currency), "TEXT"),
            ] + (try columns.indices.map { index in try bind(days.map { $0.counts.values[index] }, "BIGINT") })
        ).joined(separator: ", ")
        let cohortArrays = [
            try bind(cohorts.map(\.key.bundleID), "TEXT"), try bind(cohorts.map(\.key.environment), "TEXT"),
            try bind(cohorts.map(\.key.kind), "TEXT"), try bind(cohorts.map { Int32($0.key.cohort) }, "INTEGER"),
            try bind(cohorts.map { Int32($0.key.offset) }, "INTEGER"), try bind(cohorts.map(\.key.currency), "TEXT"),
            try bind(cohorts.map(\.value), "BIGINT"),
        ].joined(separator: ", ")
        let figureArrays = [
            try bind(figureRows.map(\.key.bundleID), "TEXT"), try bind(figureRows.map { Int32($0.key.day) }, "INTEGER"),
            try bind(figureRows.map(\.key.productID), "TEXT"), try bind(figureRows.map(\.key.currency), "TEXT"),
            try bind(figureRows.map(\.key.environment), "TEXT"), try bind(figureRows.map(\.values.purchases), "BIGINT"),
            try bind(figureRows.map(\.values.refunds), "BIGINT"), try bind(figureRows.map(\.values.revenue), "BIGINT"),
            try bind(figureRows.map(\.values.subscriptionStarts), "BIGINT"),
            try bind(figureRows.map(\.values.subscriptionEnds), "BIGINT"),
        ].joined(separator: ", ")
        let dayNames = (MetricStatements.dayKeys + columns).joined(separator: ", ")
        let cohortNames = (MetricStatements.cohortKeys + ["value"]).joined(separator: ", ")
        _ = try await connection.rows(
            PostgresQuery(
                unsafeSQL: """
                    WITH customers AS (
                        INSERT INTO metric_customers (bundle_id, environment, customer, state)
                        SELECT * FROM unnest(\(customerArrays))
                        ON CONFLICT (bundle_id, environment, customer) DO UPDATE SET state = excluded.state),
                    days AS (
                        INSERT INTO \(target.dayTable) (\(dayNames))
                        SELECT \(dayNames)
                        FROM unnest(\(dayArrays)) WITH ORDINALITY AS d(\(dayNames), n)
                        ORDER BY n
                        \(target.dayConflict)),
                    figures AS (
                        INSERT INTO daily_figures (\(FigureStatements.columns))
                        SELECT \(FigureStatements.columns)
                        FROM unnest(\(figureArrays)) WITH ORDINALITY
                            AS f(\(FigureStatements.columns), n)
                        ORDER BY n
                        \(FigureStatements.addConflict))
                    INSERT INTO \(target.cohortTable) (\(cohortNames))
                    SELECT \(cohortNames)
                    FROM unnest(\(cohortArrays)) WITH ORDINALITY AS c(\(cohortNames), n)
                    ORDER BY n
                    \(target.cohortConflict)
                    """, binds: bindings))
    }

    public func metrics(
        bundleID: String, environment: AppStoreEnvironment, days: ClosedRange<Int>, now: Date
    ) async throws -> MetricsReading {
        let (first, last) = (Int32(days.lowerBound), Int32(days.upperBound))
        let (from, until) = (Int64(days.lowerBound) * DailyFigures.dayLength, Int64(days.upperBound + 1) * DailyFigures.dayLength)
        let columns = MetricStatements.dayColumns
        let sums = columns.map { "COALESCE(SUM(\($0)), 0)::BIGINT" }.joined(separator: ", ")
        return try await read { connection in
            try await connection.withTransaction(logger: Self.quiet) { connection in
                _ = try await connection.rows("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                func metricDay(_ row: PostgresRow, day: Int?) throws -> MetricDay {
                    let cells = Array(row)
                    let offset = day == nil ? 1 : 0
                    return MetricDay(
                        day: try day ?? Int(cells[0].decode(Int32.self)), productID: try cells[offset].decode(String.self),
                        storefront: try cells[offset + 1].decode(String.self),
                        currency: try cells[offset + 2].decode(String.self),
                        counts: MetricCounts(values: try cells[(offset + 3)...].map { try $0.decode(Int64.self) }))
                }
                let before = try await connection.rows(
                    """
                    SELECT product_id, storefront, currency, \(unescaped: sums) FROM metric_days
                    WHERE bundle_id = \(bundleID) AND environment = \(environment.rawValue) AND day < \(first)
                    GROUP BY product_id, storefront, currency
                    """
                ).map { try metricDay($0, day: days.lowerBound - 1) }.filter { !$0.counts.isZero }
                let rows = try await connection.rows(
                    """
                    SELECT day, product_id, storefront, currency, \(unescaped: columns.joined(separator: ", "))
                    FROM metric_days
                    WHERE bundle_id = \(bundleID) AND environment = \(environment.rawValue) AND day >= \(first)
                        AND day <= \(last)
                    ORDER BY day, product_id, storefront, currency
                    """
                ).map { try metricDay($0, day: nil) }.filter { !$0.counts.isZero }
                let cohorts = try await connection.rows(
                    """
                    SELECT kind, cohort, month_offset, currency, value FROM metric_cohorts
                    WHERE bundle_id = \(bundleID) AND environment = \(environment.rawValue) AND value <> 0
                    ORDER BY kind, cohort, month_offset, currency
                    """
                ).compactMap { row -> MetricCohortValue? in
                    let (kind, cohort, offset, currency, value) = try row.decode((String, Int32, Int32, String, Int64).self)
                    guard let kind = MetricCohortValue.Kind(rawValue: kind) else { return nil }
                    return MetricCohortValue(
                        kind: kind, cohort: Int(cohort), offset: Int(offset), currency: currency, value: value)
                }
                var pending: [MetricCount] = []
                for row in try await connection.rows(
                    """
                    SELECT (start_at / \(DailyFigures.dayLength))::BIGINT AS day, product_id, storefront, COUNT(*)::BIGINT
                    FROM metric_runs
                    WHERE bundle_id = \(bundleID) AND environment = \(environment.rawValue) AND kind = 'trial'
                        AND end_at > \(ms(now)) AND converted = 0 AND start_at >= \(from) AND start_at < \(until)
                    GROUP BY day, product_id, storefront ORDER BY day, product_id, storefront
                    """)
                {
                    let (day, product, storefront, count) = try row.decode((Int64, String, String, Int64).self)
                    pending.append(MetricCount(day: Int(day), productID: product, storefront: storefront, count: Int(count)))
                }
                return MetricsReading(before: before, days: rows, cohorts: cohorts, pendingTrials: pending)
            }
        }
    }

    public func churnedSubscriptions(
        bundleID: String, environment: AppStoreEnvironment, periods: [MetricPeriod]
    ) async throws -> [[MetricCount]] {
        try await read { connection in
            var churned: [[MetricCount]] = []
            for period in periods {
                let (before, last) = MetricStatements.churnInstants(period)
                var bindings = PostgresBindings(capacity: 5)
                bindings.append(bundleID)
                bindings.append(environment.rawValue)
                bindings.append(before)
                bindings.append(last)
                bindings.append(last)
                let sql = MetricStatements.churn(placeholders: (1...5).map { "$\($0)" })
                churned.append(
                    try await connection.rows(PostgresQuery(unsafeSQL: sql, binds: bindings)).map {
                        let (product, storefront, count) = try $0.decode((String, String, Int64).self)
                        return MetricCount(productID: product, storefront: storefront, count: Int(count))
                    })
            }
            return churned
        }
    }
}
