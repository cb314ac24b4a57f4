import Foundation
import KakinSQLite
import SQLKit
import Synchronization

/// One SQLite connection (a ``SQLiteDirectConnection``) shared by the ledger's tasks.
///
/// A handle is used by one caller at a time (the group-commit writer's thread, or the task that
/// leased it from the reader pool, see ``SQLiteLedgerEngine``); the lock around the connection
/// makes that a rule rather than a promise, and is never contended in that use.
final class SQLiteHandle: Sendable {
    private let connection: Mutex<SQLiteDirectConnection>
    let path: String

    /// Opens `path` (`:memory:` for a private in-memory database).
    init(path: String) throws {
        do throws(SQLiteDirectError) {
            connection = Mutex(try SQLiteDirectConnection(path: path))
        } catch { throw error.ledgerError }
        self.path = path
    }

    /// Runs statements without results (pragmas, `BEGIN`, `COMMIT`).
    func execute(_ sql: String) throws {
        _ = try query(sql, [])
    }

    /// Runs one statement with `binds` and returns its rows.
    func query(_ sql: String, _ binds: [any Encodable & Sendable]) throws -> [SQLiteResultRow] {
        try query(sql, values: try binds.map(SQLiteValue.init))
    }

    /// Runs one statement with values SQLite stores as they are, and returns its rows.
    func query(_ sql: String, values: [SQLiteValue]) throws -> [SQLiteResultRow] {
        let result = try connection.withLock { connection throws(LedgerStoreError) -> SQLiteDirectResult in
            do throws(SQLiteDirectError) { return try connection.query(sql, values) } catch { throw error.ledgerError }
        }
        return result.rows.map { SQLiteResultRow(columns: result.columns, values: $0) }
    }

    /// Runs one statement that returns no rows and tells how many rows it inserted, updated or
    /// deleted (read before anyone else can use the connection).
    func write(_ sql: String, values: [SQLiteValue]) throws -> Int {
        try connection.withLock { connection throws(LedgerStoreError) -> Int in
            do throws(SQLiteDirectError) {
                _ = try connection.query(sql, values)
                return connection.changes
            } catch { throw error.ledgerError }
        }
    }

    /// From now on commits on this connection leave checkpoints to the caller and record the
    /// size of the write-ahead log (``writeAheadLogPages``).
    func trackWriteAheadLog() {
        connection.withLock { $0.trackWriteAheadLog() }
    }

    /// Pages in the write-ahead log after this connection's last commit.
    var writeAheadLogPages: Int { connection.withLock { $0.writeAheadLogPages } }

    /// How often each cached statement was compiled again since it was prepared.
    func reprepareCounts() -> [String: Int32] {
        connection.withLock { $0.reprepareCounts() }
    }
}

extension SQLiteDirectError {
    /// The ledger's error for a failed SQLite call: a busy or broken database is unavailable
    /// (worth retrying), anything else is a state the ledger does not expect.
    var ledgerError: LedgerStoreError {
        LedgerStoreError(code == .unavailable ? .unavailable : .inconsistentState, message)
    }
}

extension SQLiteValue {
    /// The SQLite value of a bound Swift value (optionals unwrapped, dates as seconds).
    ///
    /// A cast from the existential to a concrete type also sees through an `Optional` holding a
    /// value, so the common types are tried first; only what matches none of them (a `nil`, or a
    /// type SQLite cannot store) pays for the look-up of the `Optional` conformance.
    init(_ bind: any Encodable & Sendable) throws {
        if let value = Self.concrete(bind) {
            self = value
            return
        }
        switch Self.unwrap(bind) {
        case nil: self = .null
        case let value?:
            guard let stored = Self.concrete(value) else {
                throw LedgerStoreError(.invalidArgument, "SQLite cannot store a \(type(of: value))")
            }
            self = stored
        }
    }

    private static func concrete(_ bind: Any) -> SQLiteValue? {
        switch bind {
        case let value as String: .text(value)
        case let value as Int: .integer(Int64(value))
        case let value as Int64: .integer(value)
        case let value as Int32: .integer(Int64(value))
        case let value as UInt32: .integer(Int64(value))
        case let value as Bool: .integer(value ? 1 : 0)
        case let value as Double: .real(value)
        case let value as Float: .real(Double(value))
        case let value as Data: .blob(value)
        case let value as [UInt8]: .blob(Data(value))
        case let value as UUID: .text(value.uuidString)
        case let value as Date: .real(value.timeIntervalSince1970)
        default: nil
        }
    }

    private static func unwrap(_ value: Any) -> Any? {
        if let optional = value as? any AnyOptional { return optional.unwrapped.flatMap(unwrap) }
        return value
    }
}

private protocol AnyOptional { var unwrapped: Any? { get } }
extension Optional: AnyOptional {
    fileprivate var unwrapped: Any? { map { $0 as Any } }
}

/// One result row, read through SQLKit's `SQLRow`.
struct SQLiteResultRow: SQLRow {
    let columns: [String]
    let values: [SQLiteValue]

    var allColumns: [String] { columns }

    func contains(column: String) -> Bool { columns.contains(column) }

    func decodeNil(column: String) throws -> Bool { try value(column) == .null }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        let value = try value(column)
        if case .blob(let data) = value {
            if let data = data as? D { return data }
            if let bytes = [UInt8](data) as? D { return bytes }
        }
        return try D(from: SQLiteValueDecoder(value: value, column: column))
    }

    private func value(_ column: String) throws -> SQLiteValue {
        guard let index = columns.firstIndex(of: column) else {
            throw LedgerStoreError(.inconsistentState, "the row has no column \(column)")
        }
        return values[index]
    }
}

/// Decodes one column's value as a single Swift value (numbers, strings, booleans, data, optionals).
private struct SQLiteValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: SQLiteValue
    let column: String
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw mismatch("a keyed container")
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw mismatch("an unkeyed container") }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try integer() != 0 }
    func decode(_ type: String.Type) throws -> String {
        switch value {
        case .text(let text): return text
        case .integer(let number): return String(number)
        case .real(let number): return String(number)
        case .blob(let data): return String(decoding: data, as: UTF8.self)
        case .null: throw mismatch("a string")
        }
    }
    func decode(_ type: Double.Type) throws -> Double {
        switch value {
        case .real(let number): return number
        case .integer(let number): return Double(number)
        default: throw mismatch("a number")
        }
    }
    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }
    func decode(_ type: Int.Type) throws -> Int { Int(try integer()) }
    func decode(_ type: Int8.Type) throws -> Int8 { try narrow(integer()) }
    func decode(_ type: Int16.Type) throws -> Int16 { try narrow(integer()) }
    func decode(_ type: Int32.Type) throws -> Int32 { try narrow(integer()) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    func decode(_ type: UInt.Type) throws -> UInt { try narrow(integer()) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try narrow(integer()) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try narrow(integer()) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try narrow(integer()) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try narrow(integer()) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == Data.self, case .blob(let data) = value, let data = data as? T { return data }
        return try T(from: self)
    }

    private func integer() throws -> Int64 {
        switch value {
        case .integer(let number): return number
        case .real(let number) where number.rounded() == number: return Int64(number)
        case .text(let text): if let number = Int64(text) { return number }
        default: break
        }
        throw mismatch("an integer")
    }

    private func narrow<T: FixedWidthInteger>(_ number: Int64) throws -> T {
        guard let narrowed = T(exactly: number) else { throw mismatch("a \(T.self)") }
        return narrowed
    }

    private func mismatch(_ expected: String) -> LedgerStoreError {
        LedgerStoreError(.inconsistentState, "column \(column) holds \(value), not \(expected)")
    }
}
