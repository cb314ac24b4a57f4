import Foundation
import GRDB
import KakinTestSupport
import PostgresNIO
import Testing

@testable import KakinLedger

/// Each table's columns are declared once, by its record type (``LedgerRecord``): the statements
/// that write or read whole rows list their columns from it, so a column added to a table and to
/// its record reaches them all. A record that names a column the table lacks, or misses one the
/// table has, fails here on both engines.
@Suite("Ledger: every table's row, declared once")
struct LedgerRecordColumnTests {
    /// The record types, one per table.
    static let records: [any LedgerRecord.Type] = [
        TransactionRow.self, DashboardTokenRecord.self, SignInFailureRecord.self, OfferSignatureRow.self,
        AppleRequestRow.self, ReconciliationRunRow.self, ContentPackageRow.self, NotificationRow.self,
        AppTransactionRow.self, NotificationCheckpointRow.self, SubscriptionRenewalRow.self, LedgerEntryRow.self,
        BalanceRow.self, CustomerAliasRow.self, DailyFiguresRow.self, LedgerBackfillRow.self, EventRow.self,
        EventDeliveryRow.self, EventLeaseRow.self, EventCursorRow.self, MetricPendingRow.self, MetricGraceRow.self,
        MetricUnitRow.self, MetricCustomerRow.self, MetricRunRow.self, MetricDayRow.self, MetricCohortRow.self,
        MetricDayChangeRow.self, MetricCohortChangeRow.self, ConsentRescissionRecord.self,
        RetentionDecisionRecord.self, StripeEventRow.self, SignedHeaderRow.self,
    ]

    /// The tables the migrations build, but the ledger's own.
    static func tables(in store: any LedgerStore) async throws -> Set<String> {
        if let sqlite = store as? SQLiteLedger {
            return try await sqlite.writer.read { db in
                Set(
                    try String.fetchAll(
                        db,
                        sql: """
                            SELECT name FROM sqlite_master
                            WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'grdb_migrations'
                            """))
            }
        }
        let postgres = try #require(store as? PostgresLedger)
        var tables: Set<String> = []
        let rows = try await postgres.client.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")
        for try await table in rows.decode(String.self) { tables.insert(table) }
        return tables
    }

    /// The engine `store` runs on.
    static func dialect(of store: any LedgerStore) -> LedgerSQLDialect {
        store is SQLiteLedger ? .sqlite : .postgresql
    }

    /// The columns the migrations gave `table` in `store`.
    static func tableColumns(_ table: String, in store: any LedgerStore) async throws -> [String] {
        if let sqlite = store as? SQLiteLedger {
            return try await sqlite.writer.read { db in try db.columns(in: table).map(\.name) }
        }
        let postgres = try #require(store as? PostgresLedger)
        var columns: [String] = []
        let rows = try await postgres.client.query(
            """
            SELECT column_name FROM information_schema.columns
            WHERE table_name = \(table) AND table_schema = current_schema()
            """)
        for try await column in rows.decode(String.self) { columns.append(column) }
        return columns
    }

    @Test("each record names exactly its table's columns", arguments: StoreKind.backends)
    func recordsMatchTheirTables(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let dialect = Self.dialect(of: store)
            for record in Self.records {
                let table = try await Self.tableColumns(record.table, in: store)
                let engineOnly = record.engineColumns(on: dialect)
                #expect(!table.isEmpty, "\(record.table) exists")
                #expect(engineOnly.isDisjoint(with: record.columns), "\(record) leaves its engine's own columns out")
                #expect(Set(table) == Set(record.columns).union(engineOnly), "\(record) against \(record.table)")
                #expect(table.count == record.columns.count + engineOnly.count, "\(record) names each column once")
            }
        }
    }

    @Test("every table has its record, one each", arguments: StoreKind.backends)
    func everyTableHasARecord(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let tables = try await Self.tables(in: store).subtracting([LedgerSchema.migrationsTable])
            let recorded = Self.records.map { $0.table }
            #expect(Set(recorded) == tables)
            #expect(recorded.count == Set(recorded).count)
        }
    }

    /// A row of each record the writes bind by hand (``BoundRecord``), every value set.
    static let boundRows: [any BoundRecord] = {
        let day = MetricDayKey(
            bundleID: "app", environment: "Production", day: 20_000, productID: "p", storefront: "FRA", currency: "EUR")
        let cohort = MetricCohortKey(
            bundleID: "app", environment: "Production", kind: "retained", cohort: 650, offset: 2, currency: "EUR")
        let dayRow = MetricDayRow(
            key: day, counts: MetricCounts(values: MetricColumn.allCases.indices.map { Int64($0) + 1 }))
        let cohortRow = MetricCohortRow(key: cohort, value: -7)
        let body = BalanceEventPayload(currency: "gems", amount: 5, balance: 5, idempotencyKey: "k")
        let anonymous = "$kakin_anon_" + String(repeating: "0", count: 32)
        return [
            BalanceRow(bundleID: "app", appUserID: "u", currency: "gems", amount: 5),
            EventRow(PendingEvent("balance.credited", bundleID: "app", appUserID: anonymous, payload: body, at: 9)),
            EventRow(PendingEvent("balance.credited", bundleID: "app", appUserID: nil, payload: body, at: 9)),
            DailyFiguresRow(
                FigureKey(bundleID: "app", day: 20_000, productID: "p", currency: "EUR", environment: "Sandbox"),
                FigureValues(purchases: 1, refunds: 2, revenue: 3, subscriptionStarts: 4, subscriptionEnds: 5)),
            MetricPendingRow(MetricsUpdate.UnitKey(bundleID: "app", originalTransactionID: "1")),
            MetricCustomerRow(MetricsUpdate.CustomerKey(bundleID: "app", environment: "Sandbox", customer: "u"), state: "{}"),
            dayRow, cohortRow, MetricDayChangeRow(change: dayRow), MetricCohortChangeRow(change: cohortRow),
        ]
    }()

    @Test("a row bound by hand lists the values and columns its record encodes, in order")
    func boundRowsMatchTheirRecords() throws {
        for row in Self.boundRows {
            let record = type(of: row)
            let encoded = try row.columnValues().filter { !record.generatedColumns.contains($0.column) }
            #expect(encoded.map(\.column).joined(separator: ", ") == record.boundColumns, "\(record)")
            #expect(encoded.map(\.column).joined(separator: ", ") == record.insertedColumns, "\(record)")
            #expect(encoded.map(\.value) == row.boundValues, "\(record)")
        }
    }

    @Test("a record's values are bound in its columns' order, a nil as NULL")
    func insertBindsEveryColumn() throws {
        let token = DashboardTokenRecord(digest: Data([1, 2]), kind: "session", csrf: nil, expiresAt: 5, apps: "a")
        let statement: LedgerSQL = try "INSERT INTO \(insert: token)"
        let (sqlite, values) = statement.rendered(for: .sqlite)
        #expect(sqlite == "INSERT INTO dashboard_tokens (digest, kind, csrf, expires_at, apps) VALUES (?, ?, ?, ?, ?)")
        #expect(values == [.bytes(Data([1, 2])), .text("session"), .null, .integer(5), .text("a")].map(LedgerBind.value))
        let (postgres, columns) = statement.rendered(for: .postgresql)
        #expect(postgres == "INSERT INTO dashboard_tokens (digest, kind, csrf, expires_at, apps) "
            + "SELECT u.c0, u.c1, NULL, u.c3, u.c4 FROM unnest($1::BYTEA[], $2::TEXT[], $3::BIGINT[], $4::TEXT[]) "
            + "AS u(c0, c1, c3, c4)")
        #expect(columns == [
            .column([.bytes(Data([1, 2]))], of: .bytes), .column([.text("session")], of: .text),
            .column([.integer(5)], of: .integer), .column([.text("a")], of: .text),
        ])
    }

    @Test("rows are bound as one array per column on PostgreSQL, whatever their number, and as VALUES on SQLite")
    func rowsBindAsColumns() {
        func statement(_ rows: [[LedgerValue]]) -> LedgerSQL { "INSERT INTO t (a, b, c) \(values: rows)" }
        let two = statement([[.integer(1), .text("x"), .null], [.integer(2), .null, .null]])
        let three = statement([[.integer(1), .text("x"), .null], [.integer(2), .null, .null], [.integer(3), .text("z"), .null]])
        #expect(two.rendered(for: .sqlite).sql == "INSERT INTO t (a, b, c) VALUES (?, ?, ?), (?, ?, ?)")
        #expect(two.rendered(for: .sqlite).values.count == 6)
        let text = "INSERT INTO t (a, b, c) SELECT u.c0, u.c1, NULL FROM unnest($1::BIGINT[], $2::TEXT[]) AS u(c0, c1)"
        #expect(two.rendered(for: .postgresql).sql == text)
        #expect(three.rendered(for: .postgresql).sql == text)
        #expect(three.rendered(for: .postgresql).values == [
            .column([.integer(1), .integer(2), .integer(3)], of: .integer),
            .column([.text("x"), .null, .text("z")], of: .text),
        ])
        // A column of values of different types, or rows of nothing but NULL, are bound value by value.
        let mixed = statement([[.integer(1), .text("x"), .null], [.text("2"), .null, .null]])
        #expect(mixed.rendered(for: .postgresql).sql == "INSERT INTO t (a, b, c) VALUES ($1, $2, $3), ($4, $5, $6)")
        let empty = statement([[.null, .null, .null]])
        #expect(empty.rendered(for: .postgresql).sql == "INSERT INTO t (a, b, c) VALUES ($1, $2, $3)")
    }

    @Test("writes made one statement run in order and answer the last write's rows", arguments: StoreKind.backends)
    func combinedWritesAnswerTheLast(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let engine = try #require(store as? any StatementEngine)
            let header = SignedHeaderRow(header: "eyJhbGciOiJFUzI1NiJ9")
            let token = DashboardTokenRecord(digest: Data([3]), kind: "session", csrf: nil, expiresAt: 5, apps: "a")
            let combined = LedgerSQL.writes([
                try "INSERT INTO \(insert: [header]) ON CONFLICT (digest) DO NOTHING",
                try "INSERT INTO \(insert: [token]) RETURNING digest AS value",
            ])
            #expect(combined.count == 1)
            #expect(combined[0].rendered(for: .postgresql).sql.hasPrefix("WITH w0 AS (INSERT INTO signed_headers"))
            let answered = try await engine.write(combined[0], returning: LedgerColumn<Data>.self)
            #expect(answered.map(\.value) == [token.digest])
            let headers = try await engine.read(
                "SELECT header AS value FROM signed_headers WHERE digest = \(header.digest)", as: LedgerColumn<String>.self)
            #expect(headers.map(\.value) == [header.header])
        }
    }

    @Test("rows with NULL among their values, and columns of nothing but NULL, are written as given",
        arguments: StoreKind.backends)
    func rowsWithNullsRoundTrip(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let engine = try #require(store as? any StatementEngine)
            let tokens = [
                DashboardTokenRecord(digest: Data([1, 2]), kind: "session", csrf: nil, expiresAt: 5, apps: "a"),
                DashboardTokenRecord(digest: Data([0, 255]), kind: "session", csrf: "c\u{e9}\u{2713}", expiresAt: -1, apps: nil),
                DashboardTokenRecord(digest: Data(), kind: "reset", csrf: nil, expiresAt: Int64.max, apps: "b"),
            ]
            let inserted = try await engine.write(
                try "INSERT INTO \(insert: tokens) RETURNING digest AS value", returning: LedgerColumn<Data>.self)
            #expect(Set(inserted.map(\.value)) == Set(tokens.map(\.digest)))
            let read = try await engine.read(
                "SELECT \(unescaped: DashboardTokenRecord.selection()) FROM dashboard_tokens",
                as: DashboardTokenRecord.self)
            func described(_ tokens: [DashboardTokenRecord]) -> [String] {
                tokens.map { "\(Array($0.digest)) \($0.kind) \($0.csrf ?? "NULL") \($0.expiresAt) \($0.apps ?? "NULL")" }.sorted()
            }
            #expect(described(read) == described(tokens))
            // Every row's csrf NULL: the column is written as NULL, not bound.
            let more = [
                DashboardTokenRecord(digest: Data([9]), kind: "session", csrf: nil, expiresAt: 1, apps: "a"),
                DashboardTokenRecord(digest: Data([8]), kind: "session", csrf: nil, expiresAt: 2, apps: "a"),
            ]
            #expect(try await engine.write(try "INSERT INTO \(insert: more) RETURNING digest AS value",
                returning: LedgerColumn<Data>.self).count == 2)
            let csrf = try await engine.read(
                "SELECT csrf AS value FROM dashboard_tokens WHERE digest IN (\(list: [Data([9]), Data([8])]))",
                as: LedgerColumn<String?>.self)
            #expect(csrf.map(\.value) == [nil, nil])
        }
    }

    /// A record whose field is not a column (a nested value, a list).
    struct NestedRecord: LedgerRecord {
        static let table = "nested"
        typealias Columns = CodingKeys
        var id: String
        var tags: [String]

        enum CodingKeys: String, CodingKey, CaseIterable { case id, tags }
    }

    /// A record that writes itself as a list rather than as columns.
    struct ListRecord: LedgerRecord {
        static let table = "list"
        typealias Columns = CodingKeys
        var id: String

        enum CodingKeys: String, CodingKey, CaseIterable { case id }

        func encode(to encoder: any Encoder) throws {
            var list = encoder.unkeyedContainer()
            try list.encode(id)
        }
    }

    @Test("a record holding more than columns is refused with an error, not written")
    func nestedValuesAreRefused() throws {
        let record = NestedRecord(id: "a", tags: ["x"])
        #expect(throws: EncodingError.self) { try record.columnValues() }
        #expect(throws: EncodingError.self) { let _: LedgerSQL = try "INSERT INTO \(insert: record)" }
        #expect(throws: EncodingError.self) { try ListRecord(id: "a").columnValues() }
    }
}
