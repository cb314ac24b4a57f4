public import Foundation
import KakinSQLite
import Synchronization

/// Keeps the state in a SQLite database, `state.db` in a data directory, writing on each save only
/// the rows that changed: a purchase costs the same few row writes however long the history is.
///
/// Each record is one row (its JSON) in its collection's table; counters and settings are one more
/// row. A save is one SQLite transaction, so a crash leaves the old or the new state, never half.
///
/// Durability: the database runs in WAL mode with `synchronous = NORMAL`. A crash of the process
/// loses nothing that was saved; a power cut or an operating system crash may lose the last
/// saves before it (the database stays consistent). That is the right trade for a test store,
/// where a purchase should cost microseconds, not an fsync.
///
/// A directory that still holds a `state.json` from an older sandbox is imported once when the
/// store opens: its content is written to the database and the file is renamed to
/// `state.json.imported`.
public final class SQLiteStateStore: SandboxStateStore {
    /// The database file.
    public let url: URL
    private let database: Mutex<Database>

    private struct Database {
        let connection: SQLiteDirectConnection
        let coding = SandboxRowCoding()
        /// The scalars row as last read or written, so an unchanged one is not written again.
        var storedScalars: Data?
        var rowsWritten = 0
    }

    /// Opens (or creates) `state.db` in `directory`, creating the directory when needed, and
    /// imports a `state.json` found there.
    public init(directory: URL) throws(SandboxStateError) {
        url = directory.appendingPathComponent("state.db")
        let url = self.url
        let connection: SQLiteDirectConnection
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            connection = try SQLiteDirectConnection(path: url.path)
            try connection.execute("PRAGMA journal_mode = WAL")
            try connection.execute("PRAGMA synchronous = NORMAL")
            try connection.execute("PRAGMA busy_timeout = 5000")
            for table in SandboxStateChanges.tableLayout {
                switch table.kind {
                case .log:
                    try connection.execute(
                        "CREATE TABLE IF NOT EXISTS \"\(table.name)\" (ordinal INTEGER PRIMARY KEY, body BLOB NOT NULL)")
                case .map:
                    try connection.execute(
                        "CREATE TABLE IF NOT EXISTS \"\(table.name)\" (key TEXT PRIMARY KEY NOT NULL, body BLOB NOT NULL)")
                }
            }
            try connection.execute(
                "CREATE TABLE IF NOT EXISTS scalars (id INTEGER PRIMARY KEY CHECK (id = 1), body BLOB NOT NULL)")
        } catch let error as SQLiteDirectError {
            throw SandboxStateError(url: url, reason: error.message, isRetryable: error.isRetryable)
        } catch {
            throw SandboxStateError(url: url, reason: "\(error)")
        }
        database = Mutex(Database(connection: connection))
        try importStateFile(in: directory)
    }

    /// How many rows saves have written or deleted so far (the scalars row included when it changed).
    public var rowsWritten: Int { database.withLock { $0.rowsWritten } }

    public func load() throws -> SandboxState? {
        do {
            return try database.withLock { database in
                let scalars = try database.connection.query("SELECT body FROM scalars WHERE id = 1").rows.first
                guard case .blob(let body)? = scalars?.first else { return nil }
                database.storedScalars = body
                let connection = database.connection
                return try SandboxState(restoringScalars: body, decoder: database.coding.decoder) { table, row in
                    try Self.readRows(of: table, from: connection, into: row)
                }
            }
        } catch let error as SQLiteDirectError {
            throw SandboxStateError(url: url, reason: error.message, isRetryable: error.isRetryable)
        } catch let error as SandboxStateError {
            throw error
        } catch {
            throw SandboxStateError(url: url, reason: "\(error)")
        }
    }

    public func save(_ state: SandboxState) throws {
        do {
            try database.withLock { database in
                let changes = try state.changes(encoder: database.coding.encoder)
                let scalarsChanged = changes.scalars != database.storedScalars
                guard !changes.tables.isEmpty || scalarsChanged else { return }
                let connection = database.connection
                try connection.execute("BEGIN IMMEDIATE")
                do {
                    let written = try Self.write(changes, scalars: scalarsChanged, to: connection)
                    try connection.execute("COMMIT")
                    database.rowsWritten += written
                    database.storedScalars = changes.scalars
                } catch {
                    try? connection.execute("ROLLBACK")
                    throw error
                }
            }
        } catch let error as SQLiteDirectError {
            throw SandboxStateError(url: url, reason: error.message, isWrite: true, isRetryable: error.isRetryable)
        }
    }

    /// Writes `changes` inside an open transaction; returns how many rows it wrote or deleted.
    private static func write(
        _ changes: SandboxStateChanges, scalars: Bool, to connection: SQLiteDirectConnection
    ) throws(SQLiteDirectError) -> Int {
        var written = 0
        for table in changes.tables {
            if table.dropsAll { try connection.execute("DELETE FROM \"\(table.name)\"") }
            for row in table.rows {
                let (column, key): (String, SQLiteValue) =
                    switch row.key {
                    case .ordinal(let ordinal): ("ordinal", .integer(ordinal))
                    case .name(let name): ("key", .text(name))
                    }
                if let body = row.body {
                    try connection.execute(
                        "INSERT OR REPLACE INTO \"\(table.name)\" (\(column), body) VALUES (?, ?)", [key, .blob(body)])
                } else {
                    try connection.execute("DELETE FROM \"\(table.name)\" WHERE \(column) = ?", [key])
                }
                written += 1
            }
        }
        if scalars {
            try connection.execute("INSERT OR REPLACE INTO scalars (id, body) VALUES (1, ?)", [.blob(changes.scalars)])
            written += 1
        }
        return written
    }

    /// Hands each row of `table` to `row`, with its ordinal or key.
    private static func readRows(
        of table: String, from connection: SQLiteDirectConnection,
        into row: (SandboxStateChanges.RowKey, Data) throws -> Void
    ) throws {
        guard let kind = SandboxStateChanges.tableLayout.first(where: { $0.name == table })?.kind else { return }
        let column = kind == .log ? "ordinal" : "key"
        try connection.forEachRow("SELECT \(column), body FROM \"\(table)\"") { values in
            guard values.count == 2, case .blob(let body) = values[1] else {
                throw SandboxRowError(table: table)
            }
            switch values[0] {
            case .integer(let ordinal) where kind == .log: try row(.ordinal(ordinal), body)
            case .text(let key) where kind == .map: try row(.name(key), body)
            default: throw SandboxRowError(table: table)
            }
        }
    }

    /// Imports `state.json` from an older sandbox, once: writes it whole when the database is still
    /// empty, then renames the file to `state.json.imported` so it is not imported again.
    private func importStateFile(in directory: URL) throws(SandboxStateError) {
        let legacy = FileStateStore(directory: directory)
        guard FileManager.default.fileExists(atPath: legacy.url.path) else { return }
        let imported = directory.appendingPathComponent("state.json.imported")
        do {
            let empty = try database.withLock { try $0.connection.query("SELECT id FROM scalars").rows.isEmpty }
            if empty, var state = try legacy.load() {
                state.markAllChanged()
                try save(state)
            }
            try? FileManager.default.removeItem(at: imported)
            try FileManager.default.moveItem(at: legacy.url, to: imported)
        } catch let error as SandboxStateError {
            throw error
        } catch let error as SQLiteDirectError {
            throw SandboxStateError(url: url, reason: error.message, isRetryable: error.isRetryable)
        } catch {
            throw SandboxStateError(url: legacy.url, reason: "cannot import it: \(error)", isWrite: true)
        }
    }
}
