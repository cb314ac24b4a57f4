import Foundation
import KakinSQLite
import SQLKit

/// One SQL statement of the ledger's busiest paths, written once for both engines with `?` for
/// each value and run with typed values.
///
/// On a connection of the SQLite engine the text goes to the connection's statement cache as it
/// is and the values are bound as they are: no query string is built, no placeholder asked of a
/// dialect, no value cast from `Encodable`. Any other database gets the same text and values
/// through SQLKit, which writes the placeholders its dialect uses (`$1`, `$2`, … on PostgreSQL).
/// The text must not contain `?` anywhere but in the places of values.
struct LedgerStatement: Sendable {
    /// The text with `?` placeholders, as SQLite takes it.
    let text: String
    /// The text split at each placeholder: one part more than there are values.
    let parts: [String]

    init(_ text: String) {
        self.text = text
        parts = text.split(separator: "?", omittingEmptySubsequences: false).map(String.init)
    }

    /// How many values the statement takes.
    var valueCount: Int { parts.count - 1 }
}

/// A write of at most one row whose caller needs to know whether it wrote the row.
///
/// SQLite runs a `RETURNING` clause as a trigger program that fills a temporary table, and keeps
/// a statement journal of every page the write touches so that it could undo the statement
/// alone: on SQLite the write runs without the clause and SQLite's change count answers.
/// Elsewhere the clause answers, as the change count is not read through SQLKit.
struct LedgerWrite: Sendable {
    /// The write as it is, without `RETURNING`.
    let statement: LedgerStatement
    /// The write followed by `RETURNING` and a column.
    let returning: LedgerStatement

    init(_ text: String, returning column: String) {
        statement = LedgerStatement(text)
        returning = LedgerStatement(text + "\nRETURNING " + column)
    }
}

/// A value bound to a ``LedgerStatement``: its SQL type is known even when it is `NULL`, as
/// PostgreSQL needs to be told.
enum LedgerValue: Sendable {
    case text(String?)
    case integer(Int64?)
    case blob(Data?)

    static func integer(_ value: Int?) -> Self { .integer(value.map(Int64.init)) }

    /// The value as SQLite stores it.
    var sqlite: SQLiteValue {
        switch self {
        case .text(let text?): .text(text)
        case .integer(let number?): .integer(number)
        case .blob(let data?): .blob(data)
        case .text(nil), .integer(nil), .blob(nil): .null
        }
    }

    /// The value as SQLKit binds it.
    var encodable: any Encodable & Sendable {
        switch self {
        case .text(let text): text
        case .integer(let number): number
        case .blob(let data): data
        }
    }
}

/// A ``LedgerStatement`` with its values, written through SQLKit's serializer.
private struct BoundLedgerStatement: SQLExpression {
    let statement: LedgerStatement
    let values: [LedgerValue]

    func serialize(to serializer: inout SQLSerializer) {
        for (index, part) in statement.parts.enumerated() {
            serializer.write(part)
            if index < values.count { serializer.write(bind: values[index].encodable) }
        }
    }
}

extension SQLDatabase {
    /// Runs `statement` with `values` and returns its rows: at once on the calling thread on a
    /// connection of the SQLite engine, through SQLKit elsewhere.
    func run(_ statement: LedgerStatement, _ values: LedgerValue...) async throws -> [any SQLRow] {
        try await rows(statement, values)
    }

    /// ``run(_:_:)`` with the values in an array.
    func run(_ statement: LedgerStatement, values: [LedgerValue]) async throws -> [any SQLRow] {
        try await rows(statement, values)
    }

    /// The first row ``run(_:_:)`` returns.
    func first(_ statement: LedgerStatement, _ values: LedgerValue...) async throws -> (any SQLRow)? {
        try await rows(statement, values).first
    }

    /// Runs `write` with `values` and tells whether it wrote its row.
    func wrote(_ write: LedgerWrite, _ values: LedgerValue...) async throws -> Bool {
        try await wrote(write, values: values)
    }

    /// ``wrote(_:_:)`` with the values in an array.
    func wrote(_ write: LedgerWrite, values: [LedgerValue]) async throws -> Bool {
        if let connection = self as? SQLiteHandleDatabase {
            try Self.check(values, for: write.statement)
            return try connection.handle.write(write.statement.text, values: values.map(\.sqlite)) > 0
        }
        return try await !rows(write.returning, values).isEmpty
    }

    /// Runs `write` with `values` and returns the row it wrote: on SQLite, `readBack` with
    /// `readValues` once the write changed a row (see ``LedgerWrite``), elsewhere its
    /// `RETURNING` row. `readBack` must select the columns `RETURNING` names.
    func written(
        _ write: LedgerWrite, values: [LedgerValue], readBack: LedgerStatement, _ readValues: [LedgerValue]
    ) async throws -> (any SQLRow)? {
        guard self is SQLiteHandleDatabase else { return try await rows(write.returning, values).first }
        guard try await wrote(write, values: values) else { return nil }
        return try await rows(readBack, readValues).first
    }

    private static func check(_ values: [LedgerValue], for statement: LedgerStatement) throws {
        guard values.count == statement.valueCount else {
            throw LedgerStoreError(
                .invalidArgument, "a statement with \(statement.valueCount) values was given \(values.count)")
        }
    }

    private func rows(_ statement: LedgerStatement, _ values: [LedgerValue]) async throws -> [any SQLRow] {
        try Self.check(values, for: statement)
        if let connection = self as? SQLiteHandleDatabase {
            return try connection.handle.query(statement.text, values: values.map(\.sqlite))
        }
        if let session = self as? PostgresSessionDatabase { return try await session.run(statement, values) }
        if let pool = self as? PostgresClientDatabase { return try await pool.run(statement, values) }
        return try await collectRows(BoundLedgerStatement(statement: statement, values: values))
    }
}
