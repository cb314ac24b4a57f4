import AppStoreModels
import Foundation
import GRDB
import KakinCore
import KakinTestSupport
import PostgresNIO
import Testing

@testable import KakinLedger

/// The daily figures of rows held before the ledger kept them: counted when migrating, their prices
/// added by a pass of their own. (What each write keeps is the contract of ``MetricsLedger``:
/// ``MetricsLedgerContractTests``.)
@Suite("Ledger: daily figures of rows held before them")
struct DailyFiguresTests {
    static let day = 86_400.0
    /// The figures summed per day, as the contract suite of the metrics reads them.
    typealias FigureTotals = MetricsLedgerContractTests.FigureTotals

    @Test("the migration counts the rows held, and the prices of their stored JWS are added page by page",
        arguments: StoreKind.allCases)
    func backfill(kind: StoreKind) async throws {
        try await withOldLedger(kind) { execute in
            // Rows an earlier version recorded: no price column.
            let rows: [(id: String, type: String, quantity: Int, purchased: Double, expires: Double?, revoked: Double?, jws: String?)] = [
                ("a1", "Consumable", 2, 0, nil, nil, Self.jws(price: 990, currency: "EUR")),
                ("a2", "Auto-Renewable Subscription", 1, Self.day, 31 * Self.day, 5 * Self.day,
                 Self.jws(price: 4990, currency: "USD")),
                ("a3", "Consumable", 1, 0, nil, nil, nil),
                ("a4", "Consumable", 1, 0, nil, nil, Self.jws(price: nil, currency: nil)),
                ("a5", "Consumable", 1, 2 * Self.day, nil, nil, Self.jws(price: 1990, currency: "EUR")),
            ]
            for row in rows {
                try await execute(
                    """
                    INSERT INTO transactions (transaction_id, original_transaction_id, bundle_id, app_user_id,
                        product_id, product_type, quantity, purchase_date, expires_date, revocation_date, environment,
                        signed_transaction, source, recorded_at)
                    VALUES ('\(row.id)', '\(row.id)', '\(Fixture.bundleID)', 'alice', 'p', '\(row.type)', \(row.quantity),
                        \(Self.ms(row.purchased)), \(row.expires.map(Self.ms).map(String.init) ?? "NULL"),
                        \(row.revoked.map(Self.ms).map(String.init) ?? "NULL"), 'Sandbox',
                        \(row.jws.map { "'\($0)'" } ?? "NULL"), 'app', 0)
                    """)
            }
        } then: { store in
            let (_, byDay) = try await MetricsLedgerContractTests.totals(store)
            #expect(byDay[0] == FigureTotals(purchases: 3, revenue: ["EUR": 1980]))
            #expect(byDay[1] == FigureTotals(purchases: 1, revenue: ["USD": 4990], starts: 1))
            #expect(byDay[2] == FigureTotals(purchases: 1, revenue: ["EUR": 1990]))
            #expect(byDay[5] == FigureTotals(refunds: 1, ends: 1))
            #expect(byDay.count == 4)
            #expect(try await store.transaction(id: "a1")?.price == 990)
            #expect(try await store.transaction(id: "a1")?.currency == "EUR")
            #expect(try await store.transaction(id: "a4")?.price == nil)
            // Done once: migrating again adds nothing.
            try await store.migrate()
            #expect(
                try await MetricsLedgerContractTests.totals(store).byDay[0]
                    == FigureTotals(purchases: 3, revenue: ["EUR": 1980]))
        }
    }

    @Test("the price pass goes on where it stopped, and counts no row twice", arguments: StoreKind.allCases)
    func backfillResumes(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let engine = try #require(store as? any StatementEngine)
            for (index, price) in [100, 200, 300].enumerated() {
                var transaction = Fixture.transaction("t\(index)", user: "alice", purchasedAt: 0)
                transaction.signedTransaction = Self.jws(price: Int64(price), currency: "EUR")
                _ = try await store.record(transaction, grants: [])
            }
            // As an earlier version left them: no price, the pass not run.
            for statement in [
                "UPDATE transactions SET price = NULL, currency = NULL",
                "UPDATE daily_figures SET revenue = 0, currency = ''",
                "UPDATE ledger_backfills SET after_key = '', finished_at = NULL",
            ] { try await RawSQL.execute(store, statement) }
            #expect(try await engine.perform(for: nil, FigureStatements.pricePage(2)))
            #expect(try await MetricsLedgerContractTests.totals(store).byDay[0]?.revenue == ["EUR": 300])
            try await store.migrate()
            let totals = try #require(try await MetricsLedgerContractTests.totals(store).byDay[0])
            #expect(totals == FigureTotals(purchases: 3, revenue: ["EUR": 600]))
            #expect(try await !engine.perform(for: nil, FigureStatements.pricePage(2)))
        }
    }

    @Test(
        "the figures and rollups held before the store was kept are the App Store's; web sales count apart",
        arguments: StoreKind.allCases)
    func figuresByStore(kind: StoreKind) async throws {
        let (start, length, first) = (StoreMonth.start, StoreMonth.dayLength, StoreMonth.firstDay)
        let bought = start + length + 36_000_000
        try await withOldLedger(kind, before: "0029") { execute in
            // A purchase an earlier version recorded, and what it kept of it: its figures, its
            // rollup row, a change row not yet folded, a period of paid service, a customer.
            try await execute(
                """
                INSERT INTO transactions (transaction_id, original_transaction_id, bundle_id, app_user_id,
                    product_id, product_type, quantity, purchase_date, environment, source, recorded_at, price, currency)
                VALUES ('a1', 'a1', '\(Fixture.bundleID)', 'alice', 'coins100', 'Consumable', 1, \(bought),
                    'Sandbox', 'app', 0, 990, 'USD')
                """)
            try await execute(
                """
                INSERT INTO daily_figures (bundle_id, day, product_id, currency, environment, purchases, refunds,
                    revenue, subscription_starts, subscription_ends)
                VALUES ('\(Fixture.bundleID)', \(first + 1), 'coins100', 'USD', 'Sandbox', 1, 0, 990, 0, 0)
                """)
            try await execute(
                """
                INSERT INTO metric_days (bundle_id, environment, day, product_id, storefront, currency, purchases,
                    revenue, new_customers)
                VALUES ('\(Fixture.bundleID)', 'Sandbox', \(first + 1), 'coins100', 'USA', 'USD', 1, 990, 1)
                """)
            try await execute(
                """
                INSERT INTO metric_day_changes (bundle_id, environment, day, product_id, storefront, currency,
                    refunds, refunded)
                VALUES ('\(Fixture.bundleID)', 'Sandbox', \(first + 2), 'coins100', 'USA', 'USD', 1, 0)
                """)
            try await execute(
                """
                INSERT INTO metric_runs (bundle_id, original_transaction_id, environment, kind, start_at, end_at,
                    product_id, storefront)
                VALUES ('\(Fixture.bundleID)', 's1', 'Sandbox', 'paid', \(start), \(start + 20 * length), 'monthly', 'USA')
                """)
            try await execute(
                """
                INSERT INTO metric_customers (bundle_id, environment, customer, state)
                VALUES ('\(Fixture.bundleID)', 'Sandbox', 'alice',
                    '{"f":{"currency":"USD","instant":\(bought),"productID":"coins100","storefront":"USA"},"p":"a1"}')
                """)
        } then: { store in
            let days = first..<(first + StoreMonth.days)
            let now = LedgerTime.date(start + 25 * length)
            var period = try await store.dailyFigures(bundleID: Fixture.bundleID, days: days, now: now)
            #expect(
                period.figures == [
                    DailyFigures(
                        day: first + 1, productID: "coins100", currency: "USD", environment: .sandbox, store: .appStore,
                        purchases: 1, revenue: 990)
                ])

            // Alice buys the same product on the web the same day, and bob too.
            for (id, user) in [("w1", "alice"), ("w2", "bob")] {
                var web = StoreMonth.transaction(
                    StoreMonth.Sale(
                        id: id, store: .stripe, subscription: false, day: 1, price: 1_000, currency: "USD", user: user))
                web.purchaseDate = LedgerTime.date(bought + 60_000)
                _ = try await store.record(web, grants: [])
            }
            period = try await store.dailyFigures(bundleID: Fixture.bundleID, days: days, now: now)
            #expect(
                period.figures.map { "\($0.store.rawValue) \($0.purchases) \($0.revenue)" }
                    == ["appStore 1 990", "stripe 2 2000"])

            while try await store.updateMetrics(limit: 10) > 0 {}
            let reading = try await store.metrics(
                bundleID: Fixture.bundleID, environment: .sandbox, days: first...(first + 29), now: now)
            let rows = reading.days.map {
                "\($0.day - first) \($0.store.rawValue) \($0.storefront) \($0.counts[.purchases]) \($0.counts[.revenue]) "
                    + "\($0.counts[.refunds]) \($0.counts[.newCustomers])"
            }
            // Alice was a paying customer already: only bob is a new one on the web.
            #expect(rows.sorted() == ["1 appStore USA 1 990 0 1", "1 stripe  2 2000 0 1", "2 appStore USA 0 0 1 0"])
            let churned = try await store.churnedSubscriptions(
                bundleID: Fixture.bundleID, environment: .sandbox,
                periods: [MetricPeriod(start: LedgerTime.date(start + 10 * length), end: now)])
            #expect(churned == [[MetricCount(productID: "monthly", storefront: "USA", store: .appStore, count: 1)]])
        }
    }

    static func ms(_ seconds: Double) -> Int64 { LedgerTime.milliseconds(Fixture.at(seconds)) }

    /// A JWS whose payload carries `price` and `currency` (its header and signature are not read).
    static func jws(price: Int64?, currency: String?) -> String {
        var payload: [String: Any] = ["transactionId": "x"]
        payload["price"] = price
        payload["currency"] = currency
        let data = (try? JSONSerialization.data(withJSONObject: payload)) ?? Data()
        let encoded = data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "eyJhbGciOiJFUzI1NiJ9.\(encoded).c2lnbmF0dXJl"
    }

    /// A ledger of `kind` migrated up to the migration before `before` (by default 0013, before
    /// the figures), filled by `fill` with SQL, then opened and migrated by the current code for
    /// `body`.
    func withOldLedger(
        _ kind: StoreKind, before: String = "0014", _ fill: (_ execute: (String) async throws -> Void) async throws -> Void,
        then body: (any LedgerStore) async throws -> Void
    ) async throws {
        let applied = LedgerSchema.migrations.prefix { $0.id < before }
        #expect(applied.last.map { $0.id < before } ?? false)
        #expect(LedgerSchema.migrations.dropFirst(applied.count).first.map { $0.id >= before } ?? false)
        if kind == .postgres {
            try await PostgresTestDatabase.withSchema { schema in
                let old = try #require(try await openLedger(.postgres, schema: schema) as? PostgresLedger)
                let execute: (String) async throws -> Void = { sql in
                    try await old.client.query(PostgresQuery(unsafeSQL: sql))
                }
                try await execute("CREATE TABLE migrations (id TEXT PRIMARY KEY)")
                for migration in applied {
                    for statement in migration.statements(.postgresql) { try await execute(statement) }
                    try await execute("INSERT INTO migrations (id) VALUES ('\(migration.id)')")
                }
                try await fill(execute)
                try await old.shutdown()
                try await withMigratedStore(openLedger(.postgres, schema: schema), body)
            }
            return
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kakin-ledger-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ledger.sqlite").path
        let old = try DatabaseQueue(path: path)
        try await old.write { db in
            try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            for migration in applied {
                for statement in migration.statements(.sqlite) { try db.execute(sql: statement) }
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [migration.id])
            }
        }
        try await fill { sql in try await old.write { db in try db.execute(sql: sql) } }
        try old.close()
        try await withMigratedStore(openLedger(kind == .memory ? .file : kind, path: path), body)
    }
}
