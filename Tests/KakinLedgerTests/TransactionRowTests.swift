import AppStoreModels
import Foundation
import GRDB
import PostgresNIO
import KakinTestSupport
import Testing

@testable import KakinLedger

/// The `transactions` row is declared once (``TransactionRow``): every statement that writes or
/// reads a whole row lists its columns from that declaration, so a column added to the table
/// and to the declaration reaches them all.
@Suite("Ledger: the transactions row, declared once")
struct TransactionRowTests {
    /// The columns the migrations gave the `transactions` table of `store`.
    static func tableColumns(_ store: any LedgerStore) async throws -> [String] {
        if let sqlite = store as? SQLiteLedger {
            return try await sqlite.writer.read { db in try db.columns(in: "transactions").map(\.name) }
        }
        let postgres = try #require(store as? PostgresLedger)
        var columns: [String] = []
        let rows = try await postgres.client.query(
            """
            SELECT column_name FROM information_schema.columns
            WHERE table_name = 'transactions' AND table_schema = current_schema()
            """)
        for try await column in rows.decode(String.self) { columns.append(column) }
        return columns
    }

    @Test("the declaration names exactly the table's columns", arguments: StoreKind.allCases)
    func declarationMatchesTheTable(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let table = try await Self.tableColumns(store)
            #expect(Set(table) == Set(TransactionRow.columns))
            #expect(table.count == TransactionRow.columns.count)
        }
    }

    @Test("selections list the declaration's columns, with or without the signed JWS")
    func selections() {
        let all = TransactionRow.selection().components(separatedBy: ", ")
        #expect(all == TransactionRow.columns)
        let withoutJWS = TransactionRow.selection(withJWS: false, table: "t.").components(separatedBy: ", ")
        #expect(withoutJWS.count == TransactionRow.columns.count)
        #expect(withoutJWS.contains("NULL AS signed_transaction"))
        #expect(withoutJWS.filter { $0 != "NULL AS signed_transaction" }.allSatisfy { $0.hasPrefix("t.") })
    }

    @Test("every field a transaction carries is written and read back", arguments: StoreKind.allCases)
    func everyFieldRoundTrips(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            var transaction = Fixture.transaction("t1", user: "alice", type: .autoRenewableSubscription)
            transaction.appAccountToken = "0e2c3f4a-0000-4000-8000-000000000001"
            transaction.periodType = .intro
            transaction.price = 4990
            transaction.currency = "EUR"
            _ = try await store.record(transaction, grants: [])
            #expect(try await store.transaction(id: "t1") == transaction)
        }
    }
}
