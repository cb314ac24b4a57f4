import GRDB
import PostgresNIO
import Testing

@testable import KakinLedger

/// SQL run as written on a store's own engine, outside the ledger's operations: what tests use
/// to look at the tables, or to put them in a state the ledger's own writes never leave.
enum RawSQL {
    /// Runs `sql` on the store's database.
    static func execute(_ store: any LedgerStore, _ sql: String) async throws {
        if let sqlite = store as? SQLiteLedger {
            try await sqlite.writer.write { db in try db.execute(sql: sql) }
        } else {
            try await #require(store as? PostgresLedger).client.query(PostgresQuery(unsafeSQL: sql))
        }
    }

    /// The first column, as text, of the rows `sql` answers.
    static func texts(_ store: any LedgerStore, _ sql: String) async throws -> [String] {
        if let sqlite = store as? SQLiteLedger {
            return try await sqlite.writer.read { db in try String.fetchAll(db, sql: sql) }
        }
        let postgres = try #require(store as? PostgresLedger)
        var values: [String] = []
        for try await value in try await postgres.client.query(PostgresQuery(unsafeSQL: sql)).decode(String.self) {
            values.append(value)
        }
        return values
    }
}
