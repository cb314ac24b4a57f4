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
    /// (``LedgerSQL/writes(_:)``) runs them one after another and returns the last one's rows.
    func rows(_ statement: LedgerSQL) throws -> [Row] {
        guard statement.writes.isEmpty else {
            var last: [Row] = []
            for write in statement.writes { last = try rows(write) }
            return last
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

extension LedgerBind {
    /// The value as GRDB binds it. SQLite's statements bind values one by one: rows are rendered
    /// as `VALUES` for it, never as columns.
    fileprivate var bound: (any DatabaseValueConvertible)? {
        switch self {
        case .value(let value): value.bound
        case .column: preconditionFailure("a column of rows is bound on PostgreSQL only")
        }
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

    /// Decodes by column name through an index of the names made once for all the rows: GRDB
    /// finds a column by name by comparing it with every name before it, ignoring case.
    func decode<R: Decodable>(_ type: R.Type) throws -> [R] {
        guard let first = rows.first else { return [] }
        var columns: [String: Int] = [:]
        for (index, name) in first.columnNames.enumerated() where columns[name] == nil { columns[name] = index }
        let names = Array(first.columnNames)
        return try rows.map { try R(from: ColumnDecoder(row: SQLiteRow(row: $0, columns: columns, names: names))) }
    }
}

/// A row SQLite returned, its columns found by name in an index of their names.
struct SQLiteRow: ColumnRow {
    let row: Row
    let columns: [String: Int]
    let names: [String]

    private func index(_ column: String) throws -> Int {
        guard let index = columns[column] else {
            throw LedgerStoreError(.inconsistentState, "SQLite returned no column \(column)")
        }
        return index
    }

    func contains(_ column: String) -> Bool { columns[column] != nil }
    func isNull(_ column: String) -> Bool { columns[column].map { (row[$0] as DatabaseValue).isNull } ?? true }
    func text(_ column: String) throws -> String { try row.decode(String.self, atIndex: try index(column)) }
    func integer(_ column: String) throws -> Int64 { try row.decode(Int64.self, atIndex: try index(column)) }

    func value<T>(_ type: T.Type, _ column: String) throws -> T? {
        guard let convertible = T.self as? any DatabaseValueConvertible.Type else { return nil }
        return try decode(convertible, at: try index(column)) as? T
    }

    private func decode<V: DatabaseValueConvertible>(_ type: V.Type, at index: Int) throws -> V {
        try row.decode(V.self, atIndex: index)
    }
}
