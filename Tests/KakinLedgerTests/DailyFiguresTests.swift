import AppStoreModels
import Foundation
import GRDB
import KakinTestSupport
import PostgresNIO
import Testing

@testable import KakinLedger

/// The figures the dashboard's overview reads are kept with each write, once per change.
@Suite("Ledger: daily figures kept with each write")
struct DailyFiguresTests {
    static let day = 86_400.0
    /// The day of `Fixture.epoch`.
    static let firstDay = DailyFigures.day(of: Fixture.epoch)

    /// The app's figures summed per day (all products, currencies and environments), days from
    /// `Fixture.epoch`'s.
    static func totals(_ store: any LedgerStore, days: Int = 60, now: TimeInterval = 0) async throws -> (
        period: DailyFiguresPeriod, byDay: [Int: FigureTotals]
    ) {
        let period = try await store.dailyFigures(
            bundleID: Fixture.bundleID, days: firstDay..<(firstDay + days), now: Fixture.at(now))
        var byDay: [Int: FigureTotals] = [:]
        for figures in period.figures {
            byDay[figures.day - firstDay, default: FigureTotals()].add(figures)
        }
        // A row whose figures moved to another day stays, with zeros.
        return (period, byDay.filter { $0.value != FigureTotals() })
    }

    struct FigureTotals: Equatable {
        var purchases = 0
        var refunds = 0
        var revenue: [String: Int64] = [:]
        var starts = 0
        var ends = 0

        mutating func add(_ figures: DailyFigures) {
            purchases += figures.purchases
            refunds += figures.refunds
            if let currency = figures.currency, figures.revenue != 0 { revenue[currency, default: 0] += figures.revenue }
            starts += figures.subscriptionStarts
            ends += figures.subscriptionEnds
        }
    }

    static func priced(_ transaction: RecordedTransaction, _ price: Int64, _ currency: String) -> RecordedTransaction {
        var transaction = transaction
        transaction.price = price
        transaction.currency = currency
        return transaction
    }

    @Test("a first record counts once; the same transaction again, or its owner named later, changes nothing",
        arguments: StoreKind.allCases)
    func recordOnce(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let coins = Self.priced(Fixture.transaction("c1", user: nil, quantity: 3, purchasedAt: 3600), 990, "EUR")
            let monthly = Self.priced(
                Fixture.transaction("s1", user: "alice", product: "monthly", type: .autoRenewableSubscription,
                    purchasedAt: 2 * Self.day), 4990, "USD")
            for _ in 0..<2 {
                _ = try await store.record(coins, grants: Fixture.coins)
                _ = try await store.record(monthly, grants: [])
            }
            var owned = coins
            owned.appUserID = "bob"
            #expect(try await store.record(owned, grants: Fixture.coins) == .duplicate(ownerAssigned: true))
            // An ingest in a group with others, asking for a summary.
            var again = LedgerIngest(monthly, grants: [])
            again.summary = (recent: 1, withJWS: false)
            _ = try await store.ingest(again)

            let (period, byDay) = try await Self.totals(store)
            #expect(byDay[0] == FigureTotals(purchases: 1, revenue: ["EUR": 2970]))
            #expect(byDay[2] == FigureTotals(purchases: 1, revenue: ["USD": 4990], starts: 1))
            #expect(byDay[32] == FigureTotals(ends: 1))
            #expect(byDay.count == 3)
            #expect(period.subscriptionsActiveBefore == 0)
            let products = Set(period.figures.map(\.productID))
            #expect(products == ["coins100", "monthly"])
        }
    }

    @Test("a revocation counts a refund once and moves a subscription's end; a larger refund later moves them again",
        arguments: StoreKind.allCases)
    func revocations(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let monthly = Fixture.transaction(
                "s1", user: "alice", product: "monthly", type: .autoRenewableSubscription, purchasedAt: 1000)
            _ = try await store.record(monthly, grants: [])
            #expect(try await store.revoke(transactionID: "s1", at: Fixture.at(5 * Self.day), reason: 1, policy: .clampAtZero))
            // The same revocation again changes nothing.
            #expect(try await !store.revoke(transactionID: "s1", at: Fixture.at(6 * Self.day), reason: 1, policy: .clampAtZero))
            var byDay = try await Self.totals(store).byDay
            #expect(byDay[0] == FigureTotals(purchases: 1, starts: 1))
            #expect(byDay[5] == FigureTotals(refunds: 1, ends: 1))
            #expect(byDay[30] == nil)

            // A prorated refund, then a larger one on a later day: one refund, on the later day.
            _ = try await store.record(Fixture.transaction("c1", user: "bob", purchasedAt: 2000), grants: Fixture.coins)
            #expect(
                try await store.revoke(
                    transactionID: "c1", at: Fixture.at(7 * Self.day), reason: 1, share: 30_000, policy: .clampAtZero))
            #expect(
                try await store.revoke(
                    transactionID: "c1", at: Fixture.at(9 * Self.day), reason: 1, share: 60_000, policy: .clampAtZero))
            #expect(
                try await !store.revoke(
                    transactionID: "c1", at: Fixture.at(10 * Self.day), reason: 1, share: 60_000, policy: .clampAtZero))
            byDay = try await Self.totals(store).byDay
            #expect(byDay[0] == FigureTotals(purchases: 2, starts: 1))
            #expect(byDay[7] == nil)
            #expect(byDay[9] == FigureTotals(refunds: 1))
            #expect(byDay.values.map(\.refunds).reduce(0, +) == 2)

            // A transaction recorded revoked counts its refund with its purchase, once.
            let refunded = Fixture.transaction("c2", user: "bob", purchasedAt: 3000, revokedAt: 11 * Self.day)
            _ = try await store.record(refunded, grants: Fixture.coins)
            _ = try await store.ingest(LedgerIngest(refunded, grants: Fixture.coins, clawbackPolicy: .clampAtZero))
            byDay = try await Self.totals(store).byDay
            #expect(byDay[0]?.purchases == 3)
            #expect(byDay[11] == FigureTotals(refunds: 1))
        }
    }

    @Test("active subscriptions: before the period, per day, and now", arguments: StoreKind.allCases)
    func activeSubscriptions(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            // Three subscriptions of 30 days: from day 0 (revoked on day 10), day 1 and day 2.
            for (index, start) in [0.0, 1, 2].enumerated() {
                _ = try await store.record(
                    Fixture.transaction(
                        "s\(index)", user: "u\(index)", product: "monthly", type: .autoRenewableSubscription,
                        purchasedAt: start * Self.day),
                    grants: [])
            }
            _ = try await store.revoke(transactionID: "s0", at: Fixture.at(10 * Self.day), reason: 1, policy: .clampAtZero)
            let period = try await store.dailyFigures(
                bundleID: Fixture.bundleID, days: (Self.firstDay + 5)..<(Self.firstDay + 40),
                now: Fixture.at(31 * Self.day - 60))
            #expect(period.subscriptionsActiveBefore == 3)
            // Now is a minute before the subscription bought on day 1 ends (day 31), later that day.
            #expect(period.subscriptionsActiveNow == 2)
            let later = try await store.dailyFigures(
                bundleID: Fixture.bundleID, days: (Self.firstDay + 5)..<(Self.firstDay + 40),
                now: Fixture.at(31 * Self.day + 60))
            #expect(later.subscriptionsActiveNow == 1)
        }
    }

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
            let (_, byDay) = try await Self.totals(store)
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
            #expect(try await Self.totals(store).byDay[0] == FigureTotals(purchases: 3, revenue: ["EUR": 1980]))
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
            ] { try await PurchaseMetricsTests.execute(store, statement) }
            #expect(try await engine.perform(for: nil, FigureStatements.pricePage(2)))
            #expect(try await Self.totals(store).byDay[0]?.revenue == ["EUR": 300])
            try await store.migrate()
            let totals = try #require(try await Self.totals(store).byDay[0])
            #expect(totals == FigureTotals(purchases: 3, revenue: ["EUR": 600]))
            #expect(try await !engine.perform(for: nil, FigureStatements.pricePage(2)))
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

    /// A ledger of `kind` migrated up to 0013 (before the figures), filled by `fill` with SQL,
    /// then opened and migrated by the current code for `body`.
    func withOldLedger(
        _ kind: StoreKind, _ fill: (_ execute: (String) async throws -> Void) async throws -> Void,
        then body: (any LedgerStore) async throws -> Void
    ) async throws {
        let applied = LedgerSchema.migrations.prefix { $0.id < "0014" }
        #expect(applied.count == 13)
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
