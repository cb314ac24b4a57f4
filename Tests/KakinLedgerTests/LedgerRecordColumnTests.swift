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
        AppTransactionRow.self, NotificationCheckpointRow.self, SubscriptionRenewalRow.self,
    ]

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
            for record in Self.records {
                let table = try await Self.tableColumns(record.table, in: store)
                #expect(!table.isEmpty, "\(record.table) exists")
                #expect(Set(table) == Set(record.columns), "\(record) against \(record.table)")
                #expect(table.count == record.columns.count, "\(record) names each column once")
            }
        }
    }

    @Test("a record's values are bound in its columns' order, a nil as NULL")
    func insertBindsEveryColumn() throws {
        let token = DashboardTokenRecord(digest: Data([1, 2]), kind: "session", csrf: nil, expiresAt: 5, apps: "a")
        let statement: LedgerSQL = try "INSERT INTO \(insert: token)"
        let (sqlite, values) = statement.rendered(for: .sqlite)
        #expect(sqlite == "INSERT INTO dashboard_tokens (digest, kind, csrf, expires_at, apps) VALUES (?, ?, ?, ?, ?)")
        #expect(values == [.bytes(Data([1, 2])), .text("session"), .null, .integer(5), .text("a")])
        let (postgres, _) = statement.rendered(for: .postgresql)
        #expect(postgres.hasSuffix("VALUES ($1, $2, $3, $4, $5)"))
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
