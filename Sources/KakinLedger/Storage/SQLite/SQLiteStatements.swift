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
        let statement = try cachedStatement(sql: sql)
        let bound = arguments(values.map { $0.bound })
        // A statement that returns no column (a write without `RETURNING`) is executed: no cursor, no row.
        guard statement.columnCount > 0 else {
            try statement.execute(arguments: bound)
            return []
        }
        return try Row.fetchAll(statement, arguments: bound)
    }
}

/// The values as GRDB's initializer from optional existentials takes them: the one from a
/// sequence of a single convertible type reads each value through a key path it instantiates at
/// run time, on every statement, and an array passed directly would be taken by the initializer
/// from `[Any]`, which may fail.
private func arguments<Values: Sequence<(any DatabaseValueConvertible)?>>(_ values: Values) -> StatementArguments {
    StatementArguments(values)
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
        try rows.map { try R(from: ColumnDecoder(row: $0)) }
    }
}

extension Row: ColumnRow {
    var names: [String] { Array(columnNames) }
    func contains(_ column: String) -> Bool { hasColumn(column) }
    func isNull(_ column: String) -> Bool { (self[column] as DatabaseValue?)?.isNull ?? true }
    func text(_ column: String) throws -> String { try decode(String.self, forColumn: column) }
    func integer(_ column: String) throws -> Int64 { try decode(Int64.self, forColumn: column) }

    func value<T>(_ type: T.Type, _ column: String) throws -> T? {
        guard let convertible = T.self as? any DatabaseValueConvertible.Type else { return nil }
        return try decode(convertible, forColumn: column) as? T
    }
}
