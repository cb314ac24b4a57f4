import AppStoreModels
import KakinCore
import Foundation

/// The metrics kept by writes and by the job, written once for both engines: what a write that
/// changed purchases applies at its end, a step of the job, and the reads of the rollups.
extension MetricStatements {
    // MARK: Applied by writes

    /// Applies what a write changed, once, at its end: the states of the customers whose
    /// purchases kept in the write changed, the rollups' changes as change rows the job folds
    /// (``MetricRollupTarget/changes``), and the daily figures.
    static func apply(_ changes: PurchaseChanges) -> LedgerTransaction<Void> {
        apply(changes.metrics.update, settled: true, into: .changes, figures: changes.figures)
    }

    /// Brings the customers a step changed up to date, then adds the step's changes to the
    /// rollups or their change rows (`target`) and `figures` to the daily figures.
    ///
    /// The customers are read locked, in key order (``LedgerSQLDialect/Word/customerLock``): the
    /// writes and the job both change them. A customer the step's changes cannot decide alone is
    /// worked out again from the records of all their purchases (`settled`: those kept in the
    /// write are read from their transactions).
    static func apply(
        _ step: MetricsUpdate, settled: Bool, into target: MetricRollupTarget, figures: FigureChanges
    ) -> LedgerTransaction<Void> {
        let customers = step.customers.keys.sorted()
        guard !customers.isEmpty else {
            return .run(writes(customers: [], emptied: [], step.change, into: target, figures: figures)) { _ in .done(()) }
        }
        return .run(lockedStates(customers)) { rows in
            var read: [MetricsUpdate.CustomerKey: MetricCustomerState] = [:]
            for row in try rows[1].decode(CustomerStateRow.self) {
                if let state = row.state { read[row.key] = try MetricCustomerState.decode(state) }
            }
            let stored = read
            var update = step
            var states: [MetricsUpdate.CustomerKey: MetricCustomerState?] = [:]
            var recompute: [MetricsUpdate.CustomerKey] = []
            for customer in customers {
                if let decided = update.update(customer: customer, stored: stored[customer]) {
                    states[customer] = .some(decided)
                } else {
                    recompute.append(customer)
                }
            }
            let (afterStep, decided, recomputed) = (update, states, recompute)
            let finish: @Sendable (MetricsUpdate, [MetricsUpdate.CustomerKey: MetricCustomerState?]) throws
                -> LedgerTransaction<Void> = { update, states in
                    var kept: [[LedgerValue]] = []
                    var emptied: [[LedgerValue]] = []
                    for customer in customers {
                        let state = states[customer] ?? nil
                        guard state != stored[customer] else { continue }
                        if let state {
                            kept.append(MetricCustomerRow(customer, state: try state.json()).boundValues)
                        } else {
                            emptied.append(customer.values)
                        }
                    }
                    return .run(writes(customers: kept, emptied: emptied, update.change, into: target, figures: figures)) {
                        _ in .done(())
                    }
                }
            guard !recomputed.isEmpty else { return try finish(afterStep, decided) }
            var reads = settled ? recomputed.map(keptPurchases(of:)) : []
            reads.append(
                """
                WITH k(bundle_id, environment, customer) AS (VALUES \(rows: recomputed.map(\.values)))
                SELECT \(unescaped: MetricUnitRow.joined)
                FROM k \(.joinInOrder) metric_units u
                    ON u.bundle_id = k.bundle_id AND u.environment = k.environment AND u.customer = k.customer
                """)
            return .run(reads) { rows in
                var (update, states) = (afterStep, decided)
                var purchases: [MetricsUpdate.CustomerKey: [String: MetricUnitRecord]] = [:]
                if settled {
                    for (customer, rows) in zip(recomputed, rows) {
                        purchases[customer] = PurchaseMetricChanges.records(
                            of: try rows.decode(TransactionRow.self), bundleID: customer.bundleID)
                    }
                }
                for row in try rows[rows.count - 1].decode(MetricUnitRow.self) {
                    purchases[row.customerKey, default: [:]][row.originalTransactionID] =
                        try MetricUnitRecord.decode(row.record, bundleID: row.bundleID)
                }
                for customer in recomputed {
                    states[customer] = .some(
                        update.update(customer: customer, stored: stored[customer], purchases: purchases[customer] ?? [:]))
                }
                return try finish(update, states)
            }
        }
    }

    /// The customers locked, in the order given, then their stored states: two statements, so that
    /// the states are read after the locks are held. On PostgreSQL a statement reads the database as
    /// it was when the statement began, and a customer's lock may be held by another write: its
    /// state is read once that write has committed. Each state is read by its key, a lookup per
    /// customer: PostgreSQL plans a statement once per connection, and a join planned while
    /// `metric_customers` was small would read the whole table for every group once it has grown.
    private static func lockedStates(_ customers: [MetricsUpdate.CustomerKey]) -> [LedgerSQL] {
        let rows = customers.enumerated().map { [LedgerValue.integer(Int64($0.offset))] + $0.element.values }
        let keys: LedgerSQL = "\(values: rows)"
        return [
            """
            WITH k(n, bundle_id, environment, customer) AS (\(keys)),
            locked AS MATERIALIZED (
                SELECT \(.customerLock) AS locked FROM (SELECT * FROM k ORDER BY n) AS ordered)
            SELECT count(*) AS value FROM locked
            """,
            """
            WITH k(n, bundle_id, environment, customer) AS (\(keys))
            SELECT k.bundle_id, k.environment, k.customer,
                (SELECT c.state FROM metric_customers c
                 WHERE c.bundle_id = k.bundle_id AND c.environment = k.environment AND c.customer = k.customer) AS state
            FROM k
            """,
        ]
    }

    /// The transactions of purchases kept in the write that belong to `customer`
    /// (``PurchaseMetricChanges/owner(of:)``): those of its owner, and those of the one
    /// purchase without an owner it stands for.
    private static func keptPurchases(of customer: MetricsUpdate.CustomerKey) -> LedgerSQL {
        let (owner, unowned) = PurchaseMetricChanges.owner(of: customer)
        let subscription = ProductType.autoRenewableSubscription.rawValue
        return """
            SELECT \(unescaped: TransactionRow.selection()) FROM transactions
            WHERE bundle_id = \(customer.bundleID) AND app_user_id = \(owner)
                AND environment = \(customer.environment) AND product_type <> \(subscription)
            UNION ALL
            SELECT \(unescaped: TransactionRow.selection()) FROM transactions
            WHERE bundle_id = \(customer.bundleID) AND original_transaction_id = \(unowned) AND app_user_id IS NULL
                AND environment = \(customer.environment) AND product_type <> \(subscription)
            """
    }

    /// The writes that end ``apply(_:settled:into:figures:)``, in the order every writer takes
    /// the rows: customers, rollup days, daily figures, rollup cohorts, each in key order. On
    /// PostgreSQL they are one statement, the last of the write, so that the rows many writers
    /// share are held locked the shortest time.
    private static func writes(
        customers kept: [[LedgerValue]], emptied: [[LedgerValue]], _ change: MetricContributions,
        into target: MetricRollupTarget, figures: FigureChanges
    ) -> [LedgerSQL] {
        var statements: [LedgerSQL] = []
        for rows in kept.chunked(rowsPerStatement) {
            statements.append(
                """
                INSERT INTO metric_customers (\(unescaped: MetricCustomerRow.boundColumns)) \(values: rows)
                ON CONFLICT (bundle_id, environment, customer) DO UPDATE SET state = excluded.state
                """)
        }
        for rows in emptied.chunked(rowsPerStatement) {
            statements.append(
                "DELETE FROM metric_customers WHERE (bundle_id, environment, customer) IN (VALUES \(rows: rows))")
        }
        // Change rows are bound as the rollup rows they add to (``RollupChangeRow``), days and cohorts alike.
        for rows in change.sortedDays.chunked(rowsPerStatement) {
            let values = rows.map { MetricDayRow(key: $0.key, counts: $0.counts).boundValues }
            statements.append(
                """
                INSERT INTO \(unescaped: target.dayTable) (\(unescaped: MetricDayRow.boundColumns)) \(values: values)
                \(unescaped: target.dayConflict)
                """)
        }
        for rows in figures.sorted.chunked(rowsPerStatement) {
            let values = rows.map { DailyFiguresRow($0.key, $0.values).boundValues }
            statements.append(
                """
                INSERT INTO daily_figures (\(unescaped: DailyFiguresRow.boundColumns)) \(values: values)
                \(unescaped: FigureStatements.addConflict)
                """)
        }
        for rows in change.sortedCohorts.chunked(rowsPerStatement) {
            let values = rows.map { MetricCohortRow(key: $0.key, value: $0.value).boundValues }
            statements.append(
                """
                INSERT INTO \(unescaped: target.cohortTable) (\(unescaped: MetricCohortRow.boundColumns)) \(values: values)
                \(unescaped: target.cohortConflict)
                """)
        }
        return LedgerSQL.writes(statements)
    }

    /// How many rows one `VALUES` list holds at most.
    static let rowsPerStatement = 500

    // MARK: The job

    /// One step of the metrics job: claims up to `limit` marked purchases and works them out
    /// again, folds a batch of the writes' rollup changes, and brings the customers up to date;
    /// its answer is how many marks and change rows it took.
    ///
    /// Once the ledger is `settled` (each engine's `settlePurchaseMetrics()`), only subscriptions
    /// are marked and only their subscription transactions are worked out; purchases of other
    /// kinds are kept in the writes that change them (``PurchaseMetricChanges``). Before, every
    /// purchase marked is worked out as it always was, its record kept in `metric_units`;
    /// `onlyKeptInWrite` claims those purchases alone. On PostgreSQL, the engine runs a step
    /// holding the job's lock, so that servers sharing the database take turns.
    static func step(limit: Int, settled: Bool, onlyKeptInWrite: Bool = false) -> LedgerTransaction<Int> {
        let subscription = ProductType.autoRenewableSubscription.rawValue
        let claim: LedgerSQL = """
            DELETE FROM metric_pending WHERE (bundle_id, original_transaction_id) IN (
                SELECT p.bundle_id, p.original_transaction_id FROM metric_pending p
                WHERE \(onlyKeptInWrite ? 1 : 0) = 0 OR NOT EXISTS (
                    SELECT 1 FROM transactions t
                    WHERE t.original_transaction_id = p.original_transaction_id AND t.bundle_id = p.bundle_id
                        AND t.product_type = \(subscription))
                LIMIT \(limit) \(.skipLocked))
            RETURNING \(unescaped: MetricPendingRow.selection())
            """
        return .run([claim]) { rows in
            let keys = try rows[0].decode(MetricPendingRow.self).map(\.key)
            return foldChanges(limit: limit * changesPerPurchase).then { folded in
                guard !keys.isEmpty else { return .done(folded) }
                return work(keys, settled: settled).then { _ in .done(keys.count + folded) }
            }
        }
    }

    /// Works the purchases `keys` out again from their transactions, replaces their stored
    /// records and runs, and brings their customers up to date.
    private static func work(_ keys: [MetricsUpdate.UnitKey], settled: Bool) -> LedgerTransaction<Void> {
        let k: LedgerSQL = """
            WITH k(bundle_id, original) AS (
                VALUES \(rows: keys.map { [.text($0.bundleID), .text($0.originalTransactionID)] }))
            """
        return .run([
            """
            \(k) SELECT \(unescaped: TransactionRow.selection(table: "t.")) FROM k \(.joinInOrder) transactions t
                ON t.original_transaction_id = k.original AND t.bundle_id = k.bundle_id
            """,
            """
            \(k) SELECT \(unescaped: MetricGraceRow.selection("g."))
            FROM k \(.joinInOrder) metric_grace g ON g.bundle_id = k.bundle_id AND g.original_transaction_id = k.original
            """,
            """
            \(k) SELECT \(unescaped: MetricUnitRow.joined)
            FROM k \(.joinInOrder) metric_units u ON u.bundle_id = k.bundle_id AND u.original_transaction_id = k.original
            """,
        ]) { rows in
            var transactions: [MetricsUpdate.UnitKey: [TransactionRow]] = [:]
            for row in try rows[0].decode(TransactionRow.self) {
                if settled && PurchaseMetricChanges.keptInWrite(productType: row.productType) { continue }
                transactions[
                    MetricsUpdate.UnitKey(bundleID: row.bundleID, originalTransactionID: row.originalTransactionID),
                    default: []
                ].append(row)
            }
            var grace: [MetricsUpdate.UnitKey: [MetricGrace]] = [:]
            for row in try rows[1].decode(MetricGraceRow.self) {
                grace[row.key, default: []].append(row.grace)
            }
            var stored: [MetricsUpdate.UnitKey: MetricsUpdate.StoredUnit] = [:]
            for row in try rows[2].decode(MetricUnitRow.self) {
                stored[row.key] = MetricsUpdate.StoredUnit(
                    environment: row.environment, customer: row.customer,
                    record: try MetricUnitRecord.decode(row.record, bundleID: row.bundleID))
            }
            var update = MetricsUpdate()
            update.update(keys, transactions: transactions, graceExpiries: grace, stored: stored)
            let worked = update
            return .run(try unitWrites(worked.writes, stored: stored)) { _ in
                apply(worked, settled: settled, into: .rollups, figures: FigureChanges())
            }
        }
    }

    /// Replaces the stored records and runs of the purchases worked out again; a record worked
    /// out again to what is stored is not written.
    private static func unitWrites(
        _ writes: [MetricsUpdate.UnitWrite], stored: [MetricsUpdate.UnitKey: MetricsUpdate.StoredUnit]
    ) throws -> [LedgerSQL] {
        var statements: [LedgerSQL] = []
        for rows in writes.map(\.key.values).chunked(rowsPerStatement) {
            statements.append(
                "DELETE FROM metric_runs WHERE (bundle_id, original_transaction_id) IN (VALUES \(rows: rows))")
        }
        let removed = writes.filter { $0.unit == nil && stored[$0.key] != nil }.map(\.key.values)
        for rows in removed.chunked(rowsPerStatement) {
            statements.append(
                "DELETE FROM metric_units WHERE (bundle_id, original_transaction_id) IN (VALUES \(rows: rows))")
        }
        var units: [MetricUnitRow] = []
        var runs: [MetricRunRow] = []
        for write in writes {
            guard let unit = write.unit else { continue }
            runs += unit.runs.map { MetricRunRow(write.key, environment: unit.environment, run: $0) }
            let record = MetricUnitRecord(unit)
            if let old = stored[write.key], old.record == record, old.customer == unit.customer,
                old.environment == unit.environment
            {
                continue  // Worked out again to the same record: nothing to write.
            }
            units.append(
                MetricUnitRow(write.key, environment: unit.environment, customer: unit.customer, record: try record.json()))
        }
        for rows in units.chunked(rowsPerStatement) {
            statements.append(
                try """
                INSERT INTO \(insert: Array(rows))
                ON CONFLICT (bundle_id, original_transaction_id) DO UPDATE SET
                    environment = excluded.environment, customer = excluded.customer, record = excluded.record
                """)
        }
        for rows in runs.chunked(rowsPerStatement) {
            statements.append(try "INSERT INTO \(insert: Array(rows))")
        }
        return statements
    }

    // MARK: Settling

    /// Whether the pass that brings a ledger whose job worked out every kind of purchase to
    /// keeping purchases other than subscriptions in their writes has still to run: each engine
    /// runs it once, while it opens the ledger, as steps of the job claiming those purchases
    /// alone (``step(limit:settled:onlyKeptInWrite:)``), then ``settled(at:)``.
    static let unsettled: LedgerTransaction<Bool> = .run([
        "SELECT finished_at AS value FROM ledger_backfills WHERE name = \(PurchaseMetricChanges.settlePass)"
    ]) { rows in .done(try rows[0].first(LedgerColumn<Int64?>.self).map { $0.value == nil } ?? false) }

    /// Ends the settling pass: drops the `metric_units` rows of the purchases now kept in their
    /// writes (each is what the rollups hold of it), and marks the pass finished.
    static func settled(at date: Date) -> LedgerTransaction<Void> {
        .run([
            PurchaseMetricChanges.dropSettledUnits,
            "UPDATE ledger_backfills SET finished_at = \(date) WHERE name = \(PurchaseMetricChanges.settlePass)",
        ]) { _ in .done(()) }
    }

    // MARK: Reads

    /// The rollups of an app and environment over `days` (and summed before them), its cohorts,
    /// and the trials still pending at `now` that started on those days, read on one snapshot.
    static func reading(
        bundleID: String, environment: AppStoreEnvironment, days: ClosedRange<Int>, now: Date
    ) -> LedgerTransaction<MetricsReading> {
        let environment = environment.rawValue
        let sums = dayColumns.map { "CAST(COALESCE(SUM(\($0)), 0) AS BIGINT) AS \($0)" }.joined(separator: ", ")
        let (from, until) = (Int64(days.lowerBound) * DailyFigures.dayLength, Int64(days.upperBound + 1) * DailyFigures.dayLength)
        return .run([
            """
            SELECT \(days.lowerBound - 1) AS day, product_id, storefront, currency, store, \(unescaped: sums)
            FROM metric_days
            WHERE bundle_id = \(bundleID) AND environment = \(environment) AND day < \(days.lowerBound)
            GROUP BY product_id, storefront, currency, store
            """,
            """
            SELECT day, product_id, storefront, currency, store, \(unescaped: dayColumns.joined(separator: ", "))
            FROM metric_days
            WHERE bundle_id = \(bundleID) AND environment = \(environment)
                AND day >= \(days.lowerBound) AND day <= \(days.upperBound)
            ORDER BY day, product_id, storefront, currency, store
            """,
            """
            SELECT kind, cohort, month_offset, currency, value FROM metric_cohorts
            WHERE bundle_id = \(bundleID) AND environment = \(environment) AND value <> 0
            ORDER BY kind, cohort, month_offset, currency
            """,
            """
            SELECT start_at / \(unescaped: String(DailyFigures.dayLength)) AS day, product_id, storefront, store,
                COUNT(*) AS count
            FROM metric_runs
            WHERE bundle_id = \(bundleID) AND environment = \(environment) AND kind = 'trial' AND end_at > \(now)
                AND converted = 0 AND start_at >= \(from) AND start_at < \(until)
            GROUP BY start_at / \(unescaped: String(DailyFigures.dayLength)), product_id, storefront, store
            ORDER BY day, product_id, storefront, store
            """,
        ]) { rows in
            .done(
                MetricsReading(
                    before: try rows[0].decode(RollupDayRow.self).map(\.day).filter { !$0.counts.isZero },
                    days: try rows[1].decode(RollupDayRow.self).map(\.day).filter { !$0.counts.isZero },
                    cohorts: try rows[2].decode(CohortRow.self).compactMap(\.decoded),
                    pendingTrials: try rows[3].decode(MetricCountRow.self).map { try $0.decoded }))
        }
    }

    /// The subscriptions churned in each of `periods` (``churn(bundleID:environment:period:)``).
    static func churned(
        bundleID: String, environment: AppStoreEnvironment, periods: [MetricPeriod]
    ) -> LedgerTransaction<[[MetricCount]]> {
        .run(periods.map { churn(bundleID: bundleID, environment: environment.rawValue, period: $0) }) { rows in
            .done(try rows.map { try $0.decode(MetricCountRow.self).map { try $0.decoded } })
        }
    }

    /// Counts the periods of paid service covering the instant before a period that end by its
    /// last instant, of subscriptions with no period of paid service covering that last instant.
    static func churn(bundleID: String, environment: String, period: MetricPeriod) -> LedgerSQL {
        let (before, last) = churnInstants(period)
        return """
            SELECT r.product_id, r.storefront, r.store, COUNT(*) AS count FROM metric_runs r
            WHERE r.bundle_id = \(bundleID) AND r.environment = \(environment) AND r.kind = 'paid'
                AND r.end_at > \(before) AND r.end_at <= \(last) AND r.start_at <= \(before)
                AND NOT EXISTS (
                    SELECT 1 FROM metric_runs n
                    WHERE n.bundle_id = r.bundle_id AND n.original_transaction_id = r.original_transaction_id
                        AND n.kind = 'paid' AND n.start_at <= \(last) AND n.end_at > \(last))
            GROUP BY r.product_id, r.storefront, r.store ORDER BY r.product_id, r.storefront, r.store
            """
    }
}

/// The metrics' reads, the same on both engines: each on one snapshot.
extension StatementEngine {
    public func metrics(
        bundleID: String, environment: AppStoreEnvironment, days: ClosedRange<Int>, now: Date
    ) async throws -> MetricsReading {
        try await snapshot(MetricStatements.reading(bundleID: bundleID, environment: environment, days: days, now: now))
    }

    public func churnedSubscriptions(
        bundleID: String, environment: AppStoreEnvironment, periods: [MetricPeriod]
    ) async throws -> [[MetricCount]] {
        try await snapshot(MetricStatements.churned(bundleID: bundleID, environment: environment, periods: periods))
    }
}

// MARK: Rows the statements read

extension MetricsUpdate.CustomerKey {
    /// The key's columns, as a `VALUES` row binds them.
    var values: [LedgerValue] { [.text(bundleID), .text(environment), .text(customer)] }
}

extension MetricsUpdate.UnitKey {
    /// The key's columns, as a `VALUES` row binds them.
    var values: [LedgerValue] { [.text(bundleID), .text(originalTransactionID)] }
}

// MARK: Rows of the metrics' tables

/// A row of a purchase's metrics, keyed by app and original transaction ID.
protocol UnitKeyed {
    var bundleID: String { get }
    var originalTransactionID: String { get }
}

extension UnitKeyed {
    var key: MetricsUpdate.UnitKey {
        MetricsUpdate.UnitKey(bundleID: bundleID, originalTransactionID: originalTransactionID)
    }
}

/// A row of `metric_pending`: a purchase marked for the metrics job, which a step of the job
/// claims by deleting it. Every write that changes a purchase the job works out marks it, by hand
/// (``boundValues``).
struct MetricPendingRow: BoundRecord, UnitKeyed {
    static let table = "metric_pending"
    static let boundColumns = insertedColumns
    typealias Columns = CodingKeys

    var bundleID: String
    var originalTransactionID: String

    enum CodingKeys: String, CodingKey, CaseIterable {
        case bundleID = "bundle_id"
        case originalTransactionID = "original_transaction_id"
    }

    init(_ key: MetricsUpdate.UnitKey) {
        (bundleID, originalTransactionID) = (key.bundleID, key.originalTransactionID)
    }

    var boundValues: [LedgerValue] { [.text(bundleID), .text(originalTransactionID)] }
}

/// A row of `metric_grace`: a grace period Apple reported for a subscription, by the instant it
/// ends, with the expiry of the period whose renewal failed when the report named it.
struct MetricGraceRow: LedgerRecord, UnitKeyed {
    static let table = "metric_grace"
    typealias Columns = CodingKeys

    var bundleID: String
    var originalTransactionID: String
    var expiresAt: Int64
    var periodExpiresAt: Int64?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case bundleID = "bundle_id"
        case originalTransactionID = "original_transaction_id"
        case expiresAt = "expires_at"
        case periodExpiresAt = "period_expires_at"
    }

    var grace: MetricGrace { MetricGrace(expiresAt: expiresAt, periodExpiresAt: periodExpiresAt) }
}

/// A row of `metric_units`: the record of what a purchase contributed to the metrics when the job
/// last worked it out (``MetricUnitRecord`` as JSON), and the customer it counts for.
struct MetricUnitRow: LedgerRecord, UnitKeyed {
    static let table = "metric_units"
    typealias Columns = CodingKeys
    /// The columns as the reads by purchase and by customer list them (`u.`), made once.
    static let joined = selection("u.")

    var bundleID: String
    var environment: String
    var customer: String
    var originalTransactionID: String
    var record: String

    enum CodingKeys: String, CodingKey, CaseIterable {
        case bundleID = "bundle_id"
        case environment, customer
        case originalTransactionID = "original_transaction_id"
        case record
    }

    init(_ key: MetricsUpdate.UnitKey, environment: String, customer: String, record: String) {
        (bundleID, originalTransactionID) = (key.bundleID, key.originalTransactionID)
        (self.environment, self.customer, self.record) = (environment, customer, record)
    }

    var customerKey: MetricsUpdate.CustomerKey {
        MetricsUpdate.CustomerKey(bundleID: bundleID, environment: environment, customer: customer)
    }
}

/// A row of `metric_customers`: what makes a customer a paying one (``MetricCustomerState`` as
/// JSON). The writes at the end of every purchase keep these rows by hand (``boundValues``).
struct MetricCustomerRow: BoundRecord {
    static let table = "metric_customers"
    static let boundColumns = insertedColumns
    typealias Columns = CodingKeys

    var bundleID: String
    var environment: String
    var customer: String
    var state: String

    enum CodingKeys: String, CodingKey, CaseIterable {
        case bundleID = "bundle_id"
        case environment, customer, state
    }

    init(_ key: MetricsUpdate.CustomerKey, state: String) {
        (bundleID, environment, customer, self.state) = (key.bundleID, key.environment, key.customer, state)
    }

    var boundValues: [LedgerValue] { [.text(bundleID), .text(environment), .text(customer), .text(state)] }
}

/// A row of `metric_runs`: a period of paid service or a free trial of a subscription
/// (``MetricRun``), which churn and trial conversion read; the job replaces a subscription's runs
/// whenever it works the subscription out again.
struct MetricRunRow: LedgerRecord {
    static let table = "metric_runs"
    typealias Columns = CodingKeys

    var bundleID: String
    var originalTransactionID: String
    var environment: String
    /// `paid` or `trial` (``MetricRun/Kind``).
    var kind: String
    var startAt: Int64
    var endAt: Int64
    var productID: String
    var storefront: String
    /// For a trial, 1 when a paid transaction followed it; otherwise 0.
    var converted: Int
    /// Where the transaction that covers its end was paid (``PurchaseStore``'s raw value).
    var store: String

    enum CodingKeys: String, CodingKey, CaseIterable {
        case bundleID = "bundle_id"
        case originalTransactionID = "original_transaction_id"
        case environment, kind
        case startAt = "start_at"
        case endAt = "end_at"
        case productID = "product_id"
        case storefront, converted, store
    }

    init(_ key: MetricsUpdate.UnitKey, environment: String, run: MetricRun) {
        (bundleID, originalTransactionID, self.environment) = (key.bundleID, key.originalTransactionID, environment)
        (kind, startAt, endAt) = (run.kind.rawValue, run.start, run.end)
        (productID, storefront, converted, store) = (run.productID, run.storefront, run.converted ? 1 : 0, run.store)
    }
}

/// A row of `metric_days`: one app's figures for an environment, UTC day, product, storefront,
/// currency and store, a column per ``MetricColumn``. The job adds to these rows, and the writes at the end
/// of every purchase append theirs as change rows (``MetricDayChangeRow``), both by hand
/// (``boundValues``).
struct MetricDayRow: MetricRollupRow, NamedColumns {
    static let table = "metric_days"
    static let changeTable = "metric_day_changes"
    static let columnNames = MetricStatements.dayKeys + MetricStatements.dayColumns
    static let boundColumns = insertedColumns
    typealias Columns = NamedColumn<Self>

    var key: MetricDayKey
    var counts: MetricCounts

    init(key: MetricDayKey, counts: MetricCounts) {
        (self.key, self.counts) = (key, counts)
    }

    init(from decoder: any Decoder) throws {
        let row = try decoder.container(keyedBy: Columns.self)
        func text(_ column: Columns) throws -> String { try row.decode(String.self, forKey: column) }
        key = MetricDayKey(
            bundleID: try text("bundle_id"), environment: try text("environment"),
            day: try row.decode(Int.self, forKey: "day"), productID: try text("product_id"),
            storefront: try text("storefront"), currency: try text("currency"), store: try text("store"))
        counts = MetricCounts(
            values: try MetricStatements.dayColumns.map { try row.decode(Int64.self, forKey: Columns(rawValue: $0)) })
    }

    func encode(to encoder: any Encoder) throws {
        var row = encoder.container(keyedBy: Columns.self)
        try row.encode(key.bundleID, forKey: "bundle_id")
        try row.encode(key.environment, forKey: "environment")
        try row.encode(key.day, forKey: "day")
        try row.encode(key.productID, forKey: "product_id")
        try row.encode(key.storefront, forKey: "storefront")
        try row.encode(key.currency, forKey: "currency")
        try row.encode(key.store, forKey: "store")
        for (column, value) in zip(MetricStatements.dayColumns, counts.values) {
            try row.encode(value, forKey: Columns(rawValue: column))
        }
    }

    var boundValues: [LedgerValue] {
        [
            .text(key.bundleID), .text(key.environment), .integer(Int64(key.day)), .text(key.productID),
            .text(key.storefront), .text(key.currency), .text(key.store),
        ] + counts.values.map(LedgerValue.integer)
    }
}

/// A row of `metric_cohorts`: one app's value of a kind (``MetricCohortKind``) for an
/// environment, cohort month, month offset and currency. The job adds to these rows, and the
/// writes at the end of every purchase append theirs as change rows (``MetricCohortChangeRow``),
/// both by hand (``boundValues``).
struct MetricCohortRow: MetricRollupRow {
    static let table = "metric_cohorts"
    static let changeTable = "metric_cohort_changes"
    static let boundColumns = insertedColumns
    typealias Columns = CodingKeys

    var key: MetricCohortKey
    var value: Int64

    enum CodingKeys: String, CodingKey, CaseIterable {
        case bundleID = "bundle_id"
        case environment, kind, cohort
        case offset = "month_offset"
        case currency, value
    }

    init(key: MetricCohortKey, value: Int64) {
        (self.key, self.value) = (key, value)
    }

    init(from decoder: any Decoder) throws {
        let row = try decoder.container(keyedBy: Columns.self)
        key = MetricCohortKey(
            bundleID: try row.decode(String.self, forKey: .bundleID),
            environment: try row.decode(String.self, forKey: .environment),
            kind: try row.decode(String.self, forKey: .kind), cohort: try row.decode(Int.self, forKey: .cohort),
            offset: try row.decode(Int.self, forKey: .offset), currency: try row.decode(String.self, forKey: .currency))
        value = try row.decode(Int64.self, forKey: .value)
    }

    func encode(to encoder: any Encoder) throws {
        var row = encoder.container(keyedBy: Columns.self)
        try row.encode(key.bundleID, forKey: .bundleID)
        try row.encode(key.environment, forKey: .environment)
        try row.encode(key.kind, forKey: .kind)
        try row.encode(key.cohort, forKey: .cohort)
        try row.encode(key.offset, forKey: .offset)
        try row.encode(key.currency, forKey: .currency)
        try row.encode(value, forKey: .value)
    }

    var boundValues: [LedgerValue] {
        [
            .text(key.bundleID), .text(key.environment), .text(key.kind), .integer(Int64(key.cohort)),
            .integer(Int64(key.offset)), .text(key.currency), .integer(value),
        ]
    }
}

// Column names as the tables spell them.
// swiftlint:disable identifier_name

private struct CustomerStateRow: Decodable {
    var bundle_id: String
    var environment: String
    var customer: String
    var state: String?

    var key: MetricsUpdate.CustomerKey {
        MetricsUpdate.CustomerKey(bundleID: bundle_id, environment: environment, customer: customer)
    }
}

private struct CohortRow: Decodable {
    var kind: String
    var cohort: Int
    var month_offset: Int
    var currency: String
    var value: Int64

    var decoded: MetricCohortValue? {
        MetricCohortValue.Kind(rawValue: kind).map {
            MetricCohortValue(kind: $0, cohort: cohort, offset: month_offset, currency: currency, value: value)
        }
    }
}

private struct MetricCountRow: Decodable {
    var day: Int?
    var product_id: String
    var storefront: String
    var store: String
    var count: Int

    var decoded: MetricCount {
        get throws {
            MetricCount(
                day: day, productID: product_id, storefront: storefront, store: try PurchaseStore.stored(store),
                count: count)
        }
    }
}

// swiftlint:enable identifier_name

/// A day of `metric_days` as the reads list it (without its app and environment, or summed over
/// days before a range), its figures read by the names of ``MetricColumn``.
private struct RollupDayRow: Decodable {
    var day: MetricDay

    init(from decoder: any Decoder) throws {
        let row = try decoder.container(keyedBy: MetricDayRow.Columns.self)
        func text(_ column: MetricDayRow.Columns) throws -> String { try row.decode(String.self, forKey: column) }
        day = MetricDay(
            day: try row.decode(Int.self, forKey: "day"), productID: try text("product_id"),
            storefront: try text("storefront"), currency: try text("currency"),
            store: try PurchaseStore.stored(text("store")),
            counts: MetricCounts(
                values: try MetricStatements.dayColumns.map {
                    try row.decodeIfPresent(Int64.self, forKey: MetricDayRow.Columns(rawValue: $0)) ?? 0
                }))
    }
}

extension Array {
    /// The elements in consecutive slices of at most `size`.
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
