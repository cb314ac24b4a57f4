public import Foundation
import GRDB
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
    /// One connection (GRDB serializes its use).
    private let queue: DatabaseQueue
    private let saved = Mutex(Saved())

    private struct Saved {
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
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var configuration = Configuration()
            // WAL with `synchronous = NORMAL`, which GRDB sets for a WAL database.
            configuration.journalMode = .wal
            configuration.busyMode = .timeout(5)
            queue = try DatabaseQueue(path: url.path, configuration: configuration)
            try queue.write { db in
                for table in SandboxStateChanges.tableLayout {
                    let key = table.kind == .log ? "ordinal INTEGER PRIMARY KEY" : "key TEXT PRIMARY KEY NOT NULL"
                    try db.execute(sql: "CREATE TABLE IF NOT EXISTS \"\(table.name)\" (\(key), body BLOB NOT NULL)")
                }
                try db.execute(
                    sql:
                        "CREATE TABLE IF NOT EXISTS scalars (id INTEGER PRIMARY KEY CHECK (id = 1), body BLOB NOT NULL)"
                )
            }
        } catch {
            throw Self.stateError(error, url: url)
        }
        try importStateFile(in: directory)
    }

    /// How many rows saves have written or deleted so far (the scalars row included when it changed).
    public var rowsWritten: Int { saved.withLock { $0.rowsWritten } }

    public func load() throws -> SandboxState? {
        do {
            return try saved.withLock { saved in
                try queue.read { db -> SandboxState? in
                    guard let body = try Data.fetchOne(db, sql: "SELECT body FROM scalars WHERE id = 1") else {
                        return nil
                    }
                    saved.storedScalars = body
                    return try SandboxState(restoringScalars: body, decoder: saved.coding.decoder) { table, row in
                        try Self.readRows(of: table, from: db, into: row)
                    }
                }
            }
        } catch let error as SandboxStateError {
            throw error
        } catch {
            throw Self.stateError(error, url: url)
        }
    }

    public func save(_ state: SandboxState) throws {
        do {
            try saved.withLock { saved in
                let changes = try state.changes(encoder: saved.coding.encoder)
                let scalarsChanged = changes.scalars != saved.storedScalars
                guard !changes.tables.isEmpty || scalarsChanged else { return }
                let written = try queue.writeWithoutTransaction { db in
                    var written = 0
                    try db.inTransaction(.immediate) {
                        written = try Self.write(changes, scalars: scalarsChanged, to: db)
                        return .commit
                    }
                    return written
                }
                saved.rowsWritten += written
                saved.storedScalars = changes.scalars
            }
        } catch let error as DatabaseError {
            throw Self.stateError(error, url: url, isWrite: true)
        }
    }

    /// Writes `changes` inside an open transaction; returns how many rows it wrote or deleted.
    private static func write(_ changes: SandboxStateChanges, scalars: Bool, to db: Database) throws -> Int {
        var written = 0
        for table in changes.tables {
            if table.dropsAll { try db.execute(sql: "DELETE FROM \"\(table.name)\"") }
            for row in table.rows {
                let (column, key): (String, any DatabaseValueConvertible) =
                    switch row.key {
                    case .ordinal(let ordinal): ("ordinal", ordinal)
                    case .name(let name): ("key", name)
                    }
                if let body = row.body {
                    try db.cachedStatement(
                        sql: "INSERT OR REPLACE INTO \"\(table.name)\" (\(column), body) VALUES (?, ?)"
                    )
                    .execute(arguments: [key, body])
                } else {
                    try db.cachedStatement(sql: "DELETE FROM \"\(table.name)\" WHERE \(column) = ?").execute(
                        arguments: [key])
                }
                written += 1
            }
        }
        if scalars {
            try db.execute(sql: "INSERT OR REPLACE INTO scalars (id, body) VALUES (1, ?)", arguments: [changes.scalars])
            written += 1
        }
        return written
    }

    /// Hands each row of `table` to `row`, with its ordinal or key.
    private static func readRows(
        of table: String, from db: Database, into row: (SandboxStateChanges.RowKey, Data) throws -> Void
    ) throws {
        guard let kind = SandboxStateChanges.tableLayout.first(where: { $0.name == table })?.kind else { return }
        let column = kind == .log ? "ordinal" : "key"
        let rows = try Row.fetchCursor(db, sql: "SELECT \(column) AS key, body FROM \"\(table)\"")
        while let values = try rows.next() {
            let key: DatabaseValue = values["key"]
            let body: DatabaseValue = values["body"]
            switch (kind, key.storage, body.storage) {
            case (.log, .int64(let ordinal), .blob(let body)): try row(.ordinal(ordinal), body)
            case (.map, .string(let name), .blob(let body)): try row(.name(name), body)
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
            let empty = try queue.read { db in try !Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM scalars)")! }
            if empty, var state = try legacy.load() {
                state.markAllChanged()
                try save(state)
            }
            try? FileManager.default.removeItem(at: imported)
            try FileManager.default.moveItem(at: legacy.url, to: imported)
        } catch let error as SandboxStateError {
            throw error
        } catch let error as DatabaseError {
            throw Self.stateError(error, url: url)
        } catch {
            throw SandboxStateError(url: legacy.url, reason: "cannot import it: \(error)", isWrite: true)
        }
    }

    /// An error of the store: a busy, locked, full or broken database may work when tried again.
    private static func stateError(_ error: any Error, url: URL, isWrite: Bool = false) -> SandboxStateError {
        guard let error = error as? DatabaseError else { return SandboxStateError(url: url, reason: "\(error)") }
        let retryable: [ResultCode] = [
            .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_IOERR, .SQLITE_FULL, .SQLITE_CANTOPEN, .SQLITE_NOMEM,
        ]
        return SandboxStateError(
            url: url, reason: error.message ?? "\(error.resultCode)", isWrite: isWrite,
            isRetryable: retryable.contains(error.resultCode))
    }
}
