import Foundation
import VaporCSQLite

/// One SQLite connection, driven through SQLite's C API directly: statements are prepared once
/// and kept, values are bound and read in place, and nothing hops to another thread.
///
/// Not `Sendable`: one caller uses a connection at a time. Callers that share one across tasks
/// keep it behind a lock or inside an actor.
public final class SQLiteDirectConnection {
    private let raw: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]
    /// Pages in the write-ahead log after this connection's last commit, once
    /// ``trackWriteAheadLog()`` was called (written by SQLite's WAL hook, on the committing thread).
    private let walPagesAfterCommit: UnsafeMutablePointer<Int32>
    /// The file this connection opened (`:memory:` for a private in-memory database).
    public let path: String

    /// Opens `path` (`:memory:` for a private in-memory database), creating the file when needed.
    public init(path: String) throws(SQLiteDirectError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "out of memory"
            if let handle { sqlite_nio_sqlite3_close_v2(handle) }
            throw SQLiteDirectError(.unavailable, "cannot open the SQLite database \(path): \(message)")
        }
        raw = handle
        self.path = path
        walPagesAfterCommit = .allocate(capacity: 1)
        walPagesAfterCommit.initialize(to: 0)
        sqlite_nio_sqlite3_extended_result_codes(handle, 1)
    }

    /// The bytes this connection's page cache holds now (SQLite's `SQLITE_DBSTATUS_CACHE_USED`).
    public var pageCacheBytes: Int {
        var current: Int32 = 0
        var highest: Int32 = 0
        _ = sqlite_nio_sqlite3_db_status(raw, SQLITE_DBSTATUS_CACHE_USED, &current, &highest, 0)
        return Int(current)
    }

    deinit {
        walPagesAfterCommit.deallocate()
        for statement in statements.values { sqlite_nio_sqlite3_finalize(statement) }
        sqlite_nio_sqlite3_close_v2(raw)
    }

    /// Runs one statement without results (a pragma, `BEGIN`, `COMMIT`, an insert).
    public func execute(_ sql: String, _ binds: [SQLiteValue] = []) throws(SQLiteDirectError) {
        try run(sql, binds) { _ in false }
    }

    /// Runs one statement with `binds` and returns its rows.
    public func query(_ sql: String, _ binds: [SQLiteValue] = []) throws(SQLiteDirectError) -> SQLiteDirectResult {
        var rows: [[SQLiteValue]] = []
        let columns = try run(sql, binds) { row in
            rows.append(row)
            return true
        }
        return SQLiteDirectResult(columns: columns, rows: rows)
    }

    /// Runs one statement with `binds` and hands its rows to `body` one at a time, without
    /// collecting them; an error thrown by `body` stops the statement and is rethrown.
    public func forEachRow(
        _ sql: String, _ binds: [SQLiteValue] = [], _ body: ([SQLiteValue]) throws -> Void
    ) throws {
        var failure: (any Error)?
        try run(sql, binds) { row in
            do { try body(row) } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
    }

    /// Takes over checkpointing from SQLite: from now on a commit on this connection only records
    /// how many pages the write-ahead log holds (``writeAheadLogPages``) and never copies them back
    /// into the database itself, so the caller decides when and on which connection that happens.
    public func trackWriteAheadLog() {
        let hook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
            context, _, _, pages in
            context?.assumingMemoryBound(to: Int32.self).pointee = pages
            return SQLITE_OK
        }
        _ = sqlite_nio_sqlite3_wal_hook(raw, hook, UnsafeMutableRawPointer(walPagesAfterCommit))
    }

    /// Pages in the write-ahead log after the last commit on this connection (see
    /// ``trackWriteAheadLog()``); 0 before the first.
    public var writeAheadLogPages: Int { Int(walPagesAfterCommit.pointee) }

    /// The number of rows the last insert, update or delete changed.
    public var changes: Int { Int(sqlite_nio_sqlite3_changes(raw)) }

    /// How often each cached statement was compiled again since it was prepared.
    public func reprepareCounts() -> [String: Int32] {
        statements.mapValues { sqlite_nio_sqlite3_stmt_status($0, SQLITE_STMTSTATUS_REPREPARE, 0) }
    }

    /// Binds, steps and resets one cached statement; `onRow` returns `false` to stop early.
    /// Returns the result's column names (empty when no row came).
    @discardableResult
    private func run(
        _ sql: String, _ binds: [SQLiteValue], onRow: ([SQLiteValue]) -> Bool
    ) throws(SQLiteDirectError) -> [String] {
        let statement = try prepared(sql)
        // Reset only: every value is bound again at the next run. Clearing the bindings would also
        // make SQLite compile again, at the next run, every statement whose plan looked at a bound
        // value (SQLite expires such a statement when its bindings are cleared).
        defer { sqlite_nio_sqlite3_reset(statement) }
        guard sqlite_nio_sqlite3_bind_parameter_count(statement) == Int32(binds.count) else {
            throw SQLiteDirectError(
                .failed, "SQLite: the statement takes \(sqlite_nio_sqlite3_bind_parameter_count(statement)) values, not \(binds.count) (\(sql))")
        }
        for (offset, bind) in binds.enumerated() {
            try bindValue(bind, at: Int32(offset + 1), of: statement, sql: sql)
        }
        var columns: [String] = []
        while true {
            let status = sqlite_nio_sqlite3_step(statement)
            if status == SQLITE_DONE { return columns }
            guard status == SQLITE_ROW else { throw failure(status, sql) }
            let count = sqlite_nio_sqlite3_column_count(statement)
            if columns.isEmpty {
                columns = (0..<count).map { String(cString: sqlite_nio_sqlite3_column_name(statement, $0)) }
            }
            var values: [SQLiteValue] = []
            values.reserveCapacity(Int(count))
            for index in 0..<count { values.append(value(at: index, of: statement)) }
            guard onRow(values) else { return columns }
        }
    }

    private func prepared(_ sql: String) throws(SQLiteDirectError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let status = sqlite_nio_sqlite3_prepare_v3(raw, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw failure(status, sql) }
        statements[sql] = statement
        return statement
    }

    private func bindValue(
        _ value: SQLiteValue, at index: Int32, of statement: OpaquePointer, sql: String
    ) throws(SQLiteDirectError) {
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

    /// A typed error for a failed SQLite call: a busy, locked or broken database is unavailable
    /// (worth retrying), anything else is a failure the caller does not expect.
    private func failure(_ status: Int32, _ sql: String) -> SQLiteDirectError {
        let message = String(cString: sqlite_nio_sqlite3_errmsg(raw))
        let statement = sql.prefix(80).replacingOccurrences(of: "\n", with: " ")
        switch status & 0xFF {
        case SQLITE_BUSY, SQLITE_LOCKED, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOMEM:
            return SQLiteDirectError(.unavailable, "SQLite: \(message) (\(statement))", status: status)
        default:
            return SQLiteDirectError(.failed, "SQLite: \(message) (\(statement))", status: status)
        }
    }
}

/// SQLite's destructor constant meaning "copy the bytes now".
private let SQLITE_TRANSIENT_DESTRUCTOR = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
