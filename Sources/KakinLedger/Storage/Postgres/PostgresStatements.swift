import Foundation
import PostgresNIO

/// PostgreSQL's side of the statements defined once: rendered with `$1…` placeholders, writes
/// through the customer's writer.
extension PostgresLedger: StatementEngine {
    func read<R: Decodable & Sendable>(_ statement: LedgerSQL, as type: R.Type) async throws -> [R] {
        try await PostgresRows(rows: read { try await $0.rows(of: statement) }).decode(R.self)
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
                    results.append(PostgresRows(rows: try await connection.rows(of: statement)))
                }
                step = try then(results)
            }
        }
    }
}

extension LedgerSQL {
    /// A rendered statement's binds (``rendered(for:)``) as PostgresNIO sends them.
    static func postgresBindings(_ values: [LedgerBind]) -> PostgresBindings {
        var binds = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .value(.null): binds.appendNull()
            case .value(.integer(let value)): binds.append(value)
            case .value(.text(let value)): binds.append(value)
            case .value(.bytes(let value)): binds.append(ByteBuffer(bytes: value))
            case .column(let values, let kind): binds.append(PostgresColumn(values: values, kind: kind))
            }
        }
        return binds
    }
}

extension LedgerBind {
    /// The type the bind declares to PostgreSQL, as PostgresNIO's encoder for it does.
    var postgresType: PostgresDataType {
        switch self {
        case .value(.null): .null
        case .value(.integer): Int64.psqlType
        case .value(.text): String.psqlType
        case .value(.bytes): ByteBuffer.psqlType
        case .column(_, let kind): kind.postgresArrayType
        }
    }
}

extension LedgerValue.Kind {
    /// PostgreSQL's type of a value of this kind.
    var postgresType: PostgresDataType {
        switch self {
        case .integer: .int8
        case .text: .text
        case .bytes: .bytea
        }
    }

    /// PostgreSQL's type of an array of values of this kind.
    var postgresArrayType: PostgresDataType {
        switch self {
        case .integer: .int8Array
        case .text: .textArray
        case .bytes: .byteaArray
        }
    }
}

/// A column of a group of rows bound as one PostgreSQL array, in the binary format PostgreSQL's
/// `array_recv` reads: one dimension, whether it holds `NULL`, the elements' type, the length and
/// the lower bound (1), then each element as its length and its bytes, or `-1` for `NULL`. Each
/// element is written by PostgresNIO's own encoder for its type. (PostgresNIO's arrays of Swift
/// values hold no `NULL`.)
struct PostgresColumn: PostgresDynamicTypeEncodable {
    let values: [LedgerValue]
    let kind: LedgerValue.Kind

    var psqlType: PostgresDataType { kind.postgresArrayType }

    var psqlFormat: PostgresFormat { .binary }

    func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        buffer.writeInteger(1, as: Int32.self)
        buffer.writeInteger(values.contains(.null) ? 1 : 0, as: Int32.self)
        buffer.writeInteger(kind.postgresType.rawValue)
        buffer.writeInteger(Int32(values.count))
        buffer.writeInteger(1, as: Int32.self)
        for value in values {
            guard value != .null else {
                buffer.writeInteger(-1, as: Int32.self)
                continue
            }
            let length = buffer.writerIndex
            buffer.writeInteger(0, as: Int32.self)
            switch value {
            case .null: break
            case .integer(let value): value.encode(into: &buffer, context: context)
            case .text(let value): value.encode(into: &buffer, context: context)
            case .bytes(let value): ByteBuffer(bytes: value).encode(into: &buffer, context: context)
            }
            buffer.setInteger(Int32(buffer.writerIndex - length - 4), at: length)
        }
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
