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

/// Decodes a type whose coding keys are column names (``TransactionRow``) from a row, each
/// column with PostgresNIO's decoder for its Swift type.
struct ColumnDecoder: Decoder {
    let row: PostgresRandomAccessRow
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Columns(row: row))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Self.unsupported }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw Self.unsupported }

    static let unsupported = DecodingError.dataCorrupted(
        .init(codingPath: [], debugDescription: "a row has columns only"))

    struct Columns<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let row: PostgresRandomAccessRow
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { row.compactMap { Key(stringValue: $0.columnName) } }

        func contains(_ key: Key) -> Bool { row.contains(key.stringValue) }
        func decodeNil(forKey key: Key) throws -> Bool { row[key.stringValue].bytes == nil }

        // The row's text and integer columns, decoded without looking their type up at run time.
        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            try row[key.stringValue].decode(String.self)
        }

        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
            try row[key.stringValue].decode(Int64.self)
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            guard let decodable = T.self as? any PostgresDecodable.Type,
                let value = try row[key.stringValue].decode(decodable) as? T
            else {
                throw DecodingError.typeMismatch(
                    T.self, .init(codingPath: [key], debugDescription: "not a column type"))
            }
            return value
        }

        func nestedContainer<Nested: CodingKey>(
            keyedBy type: Nested.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<Nested> { throw ColumnDecoder.unsupported }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw ColumnDecoder.unsupported
        }
        func superDecoder() throws -> any Decoder { throw ColumnDecoder.unsupported }
        func superDecoder(forKey key: Key) throws -> any Decoder { throw ColumnDecoder.unsupported }
    }
}

