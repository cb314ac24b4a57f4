import CKakinSQLite
import Foundation
import SQLKit
import Synchronization
import VaporCSQLite

/// One SQLite connection, driven through SQLite's C API directly: statements are prepared once
/// and kept, values are bound and read in place, and nothing hops to another thread.
///
/// A handle is used by one caller at a time (the group-commit writer's thread, or the task that
/// leased it from the reader pool, see ``SQLiteLedgerEngine``); the lock around the connection
/// makes that a rule rather than a promise, and is never contended in that use.
final class SQLiteHandle: Sendable {
    private let connection: Mutex<SQLiteConnectionState>
    let path: String

    /// Opens `path` (`:memory:` for a private in-memory database).
    init(path: String) throws {
        connection = Mutex(try SQLiteConnectionState(path: path))
        self.path = path
    }

    /// Runs statements without results (pragmas, `BEGIN`, `COMMIT`).
    func execute(_ sql: String) throws {
        _ = try query(sql, [])
    }

    /// Runs one statement with `binds` and returns its rows.
    func query(_ sql: String, _ binds: [any Encodable & Sendable]) throws -> [SQLiteResultRow] {
        try connection.withLock { try $0.query(sql, binds) }
    }

    /// How often each cached statement was compiled again since it was prepared.
    func reprepareCounts() -> [String: Int32] {
        connection.withLock { $0.reprepareCounts() }
    }
}

/// The C side of a connection: the `sqlite3` handle and its prepared statements. Not `Sendable`:
/// only ``SQLiteHandle``'s lock reaches it.
final class SQLiteConnectionState {
    private let raw: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    /// Opens `path` (`:memory:` for a private in-memory database).
    init(path: String) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "out of memory"
            if let handle { sqlite_nio_sqlite3_close_v2(handle) }
            throw LedgerStoreError(.unavailable, "cannot open the SQLite database \(path): \(message)")
        }
        raw = handle
        sqlite_nio_sqlite3_extended_result_codes(handle, 1)
        // Plans do not depend on bound values, so a prepared statement is never compiled again
        // because a customer ID or a limit changed.
        _ = kakin_sqlite_enable_qpsg(UnsafeMutableRawPointer(handle))
    }

    deinit {
        for statement in statements.values { sqlite_nio_sqlite3_finalize(statement) }
        sqlite_nio_sqlite3_close_v2(raw)
    }

    /// Runs one statement with `binds` and returns its rows.
    func query(_ sql: String, _ binds: [any Encodable & Sendable]) throws -> [SQLiteResultRow] {
        let statement = try prepared(sql)
        defer {
            sqlite_nio_sqlite3_reset(statement)
            sqlite_nio_sqlite3_clear_bindings(statement)
        }
        for (offset, bind) in binds.enumerated() {
            try bindValue(SQLiteValue(bind), at: Int32(offset + 1), of: statement, sql: sql)
        }
        var rows: [SQLiteResultRow] = []
        var columns: [String]?
        while true {
            let status = sqlite_nio_sqlite3_step(statement)
            if status == SQLITE_DONE { return rows }
            guard status == SQLITE_ROW else { throw failure(status, sql) }
            let count = sqlite_nio_sqlite3_column_count(statement)
            if columns == nil {
                columns = (0..<count).map { String(cString: sqlite_nio_sqlite3_column_name(statement, $0)) }
            }
            var values: [SQLiteValue] = []
            values.reserveCapacity(Int(count))
            for index in 0..<count { values.append(value(at: index, of: statement)) }
            rows.append(SQLiteResultRow(columns: columns ?? [], values: values))
        }
    }

    /// How often each cached statement was compiled again since it was prepared.
    func reprepareCounts() -> [String: Int32] {
        statements.mapValues { sqlite_nio_sqlite3_stmt_status($0, SQLITE_STMTSTATUS_REPREPARE, 0) }
    }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let status = sqlite_nio_sqlite3_prepare_v3(raw, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw failure(status, sql) }
        statements[sql] = statement
        return statement
    }

    private func bindValue(_ value: SQLiteValue, at index: Int32, of statement: OpaquePointer, sql: String) throws {
        let status: Int32
        switch value {
        case .null: status = sqlite_nio_sqlite3_bind_null(statement, index)
        case .integer(let number): status = sqlite_nio_sqlite3_bind_int64(statement, index, number)
        case .real(let number): status = sqlite_nio_sqlite3_bind_double(statement, index, number)
        case .text(let text):
            status = sqlite_nio_sqlite3_bind_text64(
                statement, index, text, UInt64(text.utf8.count), SQLITE_TRANSIENT_DESTRUCTOR, UInt8(SQLITE_UTF8))
        case .blob(let data):
            status = data.withUnsafeBytes {
                sqlite_nio_sqlite3_bind_blob64(
                    statement, index, $0.baseAddress, UInt64($0.count), SQLITE_TRANSIENT_DESTRUCTOR)
            }
        }
        guard status == SQLITE_OK else { throw failure(status, sql) }
    }

    private func value(at index: Int32, of statement: OpaquePointer) -> SQLiteValue {
        switch sqlite_nio_sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(sqlite_nio_sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT: return .real(sqlite_nio_sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            guard let text = sqlite_nio_sqlite3_column_text(statement, index) else { return .text("") }
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, index))
            guard count > 0, let bytes = sqlite_nio_sqlite3_column_blob(statement, index) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default: return .null
        }
    }

    /// A typed error for a failed SQLite call: a busy or broken database is unavailable (worth
    /// retrying), anything else is a state the ledger does not expect.
    private func failure(_ status: Int32, _ sql: String) -> LedgerStoreError {
        let message = String(cString: sqlite_nio_sqlite3_errmsg(raw))
        let primary = status & 0xFF
        let statement = sql.prefix(80).replacingOccurrences(of: "\n", with: " ")
        switch primary {
        case SQLITE_BUSY, SQLITE_LOCKED, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOMEM:
            return LedgerStoreError(.unavailable, "SQLite: \(message) (\(statement))")
        default:
            return LedgerStoreError(.inconsistentState, "SQLite: \(message) (\(statement))")
        }
    }
}

/// SQLite's destructor constant meaning "copy the bytes now".
private let SQLITE_TRANSIENT_DESTRUCTOR = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A value as SQLite stores it.
enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// The SQLite value of a bound Swift value (optionals unwrapped, dates as seconds).
    init(_ bind: any Encodable & Sendable) throws {
        switch Self.unwrap(bind) {
        case nil: self = .null
        case let value as String: self = .text(value)
        case let value as Int: self = .integer(Int64(value))
        case let value as Int64: self = .integer(value)
        case let value as Int32: self = .integer(Int64(value))
        case let value as UInt32: self = .integer(Int64(value))
        case let value as Bool: self = .integer(value ? 1 : 0)
        case let value as Double: self = .real(value)
        case let value as Float: self = .real(Double(value))
        case let value as Data: self = .blob(value)
        case let value as [UInt8]: self = .blob(Data(value))
        case let value as UUID: self = .text(value.uuidString)
        case let value as Date: self = .real(value.timeIntervalSince1970)
        case let value?:
            throw LedgerStoreError(.invalidArgument, "SQLite cannot store a \(type(of: value))")
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
