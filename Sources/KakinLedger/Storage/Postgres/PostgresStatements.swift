import Foundation
import PostgresNIO

/// PostgreSQL's side of the statements defined once: rendered with `$1…` placeholders, writes
/// through the customer's writer.
extension PostgresLedger: StatementEngine {
    func read<R: Decodable & Sendable>(_ statement: LedgerSQL, as type: R.Type) async throws -> [R] {
        try await PostgresRows(rows: rows(statement.postgresQuery)).decode(R.self)
    }

    func snapshot<Output: Sendable>(_ transaction: LedgerTransaction<Output>) async throws -> Output {
        try await read { connection in
            try await connection.withTransaction(logger: Self.quiet) { connection in
                _ = try await connection.rows("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                return try await Self.perform(transaction, on: connection)
            }
        }
    }

    func perform<Output: Sendable>(for customer: String?, _ transaction: LedgerTransaction<Output>) async throws
        -> Output
    {
        try await write(for: customer) { connection in try await Self.perform(transaction, on: connection) }
    }

    func perform<Output: Sendable>(
        for customer: String?, changing transaction: LedgerTransaction<(Output, PurchaseChanges)>
    ) async throws -> Output {
        try await write(for: customer) { connection in
            let (output, changes) = try await Self.perform(transaction, on: connection)
            try await Self.apply(changes, on: connection)
            return output
        }
    }

    /// Runs a transaction's statements in the transaction open on `connection`.
    static func perform<Output: Sendable>(
        _ transaction: LedgerTransaction<Output>, on connection: PostgresConnection
    ) async throws -> Output {
        var step = transaction
        while true {
            switch step {
            case .done(let output): return output
            case .run(let statements, let then):
                var results: [any LedgerRowSet] = []
                for statement in statements {
                    results.append(PostgresRows(rows: try await connection.rows(statement.postgresQuery)))
                }
                step = try then(results)
            }
        }
    }
}

extension LedgerSQL {
    /// The statement as PostgresNIO sends it.
    var postgresQuery: PostgresQuery {
        let (sql, values) = rendered(for: .postgresql)
        var binds = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: binds.appendNull()
            case .integer(let value): binds.append(value)
            case .text(let value): binds.append(value)
            case .bytes(let value): binds.append(ByteBuffer(bytes: value))
            }
        }
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }
}

/// Rows PostgreSQL returned.
struct PostgresRows: LedgerRowSet {
    let rows: [PostgresRow]
    var count: Int { rows.count }

    func decode<R: Decodable>(_ type: R.Type) throws -> [R] {
        try rows.map { try R(from: ColumnDecoder(row: $0.makeRandomAccess())) }
    }
}

extension PostgresRandomAccessRow: ColumnRow {
    var names: [String] { map(\.columnName) }
    func isNull(_ column: String) -> Bool { self[column].bytes == nil }

    // Text and integer columns are decoded without looking their type up at run time.
    func text(_ column: String) throws -> String { try self[column].decode(String.self) }
    func integer(_ column: String) throws -> Int64 { try self[column].decode(Int64.self) }

    func value<T>(_ type: T.Type, _ column: String) throws -> T? {
        guard let decodable = T.self as? any PostgresDecodable.Type else { return nil }
        return try self[column].decode(decodable) as? T
    }
}
