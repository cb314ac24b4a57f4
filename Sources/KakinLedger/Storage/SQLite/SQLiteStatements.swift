import Foundation
import GRDB

/// SQLite's side of the statements defined once: rendered with `?` placeholders, kept prepared,
/// writes through the group commit.
extension SQLiteLedger: StatementEngine {
    func read<R: Decodable & Sendable>(_ statement: LedgerSQL, as type: R.Type) async throws -> [R] {
        try await read { db in try SQLiteRows(rows: db.rows(statement)).decode(R.self) }
    }

    func snapshot<Output: Sendable>(_ transaction: LedgerTransaction<Output>) async throws -> Output {
        try await read { db in try Self.perform(transaction, db) }
    }

    func perform<Output: Sendable>(for customer: String?, _ transaction: LedgerTransaction<Output>) async throws
        -> Output
    {
        try await write { db in try Self.perform(transaction, db) }
    }

    func perform<Output: Sendable>(
        for customer: String?, changing transaction: LedgerTransaction<(Output, PurchaseChanges)>
    ) async throws -> Output {
        try await write { db in
            let (output, changes) = try Self.perform(transaction, db)
            try Self.apply(changes, db)
            return output
        }
    }

    /// Runs a transaction's statements in the write open on `db`.
    static func perform<Output: Sendable>(_ transaction: LedgerTransaction<Output>, _ db: Database) throws -> Output {
        var step = transaction
        while true {
            switch step {
            case .done(let output): return output
            case .run(let statements, let then):
                step = try then(try statements.map { SQLiteRows(rows: try db.rows($0)) })
            }
        }
    }
}

extension Database {
    /// The rows of a statement defined once, kept prepared; a statement of several writes
    /// (``LedgerSQL/writes(_:)``) runs them one after another and returns no row.
    func rows(_ statement: LedgerSQL) throws -> [Row] {
        guard statement.writes.isEmpty else {
            for write in statement.writes { _ = try rows(write) }
            return []
        }
        let (sql, values) = statement.rendered(for: .sqlite)
        // The values as existentials: GRDB's initializer from a sequence of one convertible type
        // reads each through a key path it instantiates at run time, on every statement. (A lazy
        // sequence: an array would be taken by the initializer from `[Any]`, which may fail.)
        let arguments = StatementArguments(values.lazy.map { $0.bound })
        return try Row.fetchAll(cachedStatement(sql: sql), arguments: arguments)
    }
}

extension LedgerValue {
    /// The value as GRDB binds it.
    fileprivate var bound: (any DatabaseValueConvertible)? {
        switch self {
        case .null: nil
        case .integer(let value): value
        case .text(let value): value
        case .bytes(let value): value
        }
    }
}

/// Rows SQLite returned.
struct SQLiteRows: LedgerRowSet {
    let rows: [Row]
    var count: Int { rows.count }

    func decode<R: Decodable>(_ type: R.Type) throws -> [R] {
        try rows.map { try DecodedRow<R>(row: $0).value }
    }
}

/// A row decoded by GRDB's decoder for records (`FetchableRecord` with `Decodable`).
private struct DecodedRow<Value: Decodable>: FetchableRecord, Decodable {
    var value: Value

    init(from decoder: any Decoder) throws {
        value = try Value(from: decoder)
    }
}
