import Foundation
import GRDB
import KakinCore

/// What a backup of a SQLite ledger holds, written beside the copy as `manifest.json`: read from
/// the copy itself, so it describes exactly the snapshot that was copied.
public struct LedgerBackupManifest: Codable, Hashable, Sendable {
    /// The version of this manifest's layout.
    public var format: Int
    /// The engine the copy is for: `sqlite`.
    public var engine: String
    /// The last schema migration applied to the copy (such as `0019_refund_reversals`).
    public var schemaVersion: String
    /// When the copy was taken: every write acknowledged before this instant is in it.
    public var takenAt: Date
    /// The ID of the ledger's last outbox event in the copy; `nil` when it has none.
    public var lastEventID: Int64?
    /// When that event was recorded.
    public var lastEventAt: Date?
    /// How many transactions the copy holds.
    public var transactions: Int64

    /// The layout this version writes and reads.
    public static let currentFormat = 1

    /// Creates a manifest from its parts.
    public init(
        format: Int = Self.currentFormat, engine: String = "sqlite", schemaVersion: String, takenAt: Date,
        lastEventID: Int64?, lastEventAt: Date?, transactions: Int64
    ) {
        self.format = format
        self.engine = engine
        self.schemaVersion = schemaVersion
        self.takenAt = takenAt
        self.lastEventID = lastEventID
        self.lastEventAt = lastEventAt
        self.transactions = transactions
    }
}

/// Online backups of a SQLite ledger, and their restore, through SQLite's backup API.
///
/// A backup is a directory holding `ledger.sqlite` (a complete database, its log folded in) and
/// `manifest.json` (``LedgerBackupManifest``). It is taken from one read snapshot while servers go
/// on writing: writers are not blocked, and every write acknowledged before the copy began is in
/// it. The directory (and any folder above it the backup makes) is 0700, its files 0600, whatever
/// the umask: a backup holds what the ledger holds. A restore copies the backup back into the
/// ledger's file only while no connection has that file open (SQLite's exclusive locking mode
/// decides, across processes), and holds it exclusively until the copy is complete, so that no
/// server can start on a half-restored ledger; the restored ledger is 0600.
public enum SQLiteBackup {
    /// The database file inside a backup directory.
    public static let ledgerFile = "ledger.sqlite"
    /// The manifest inside a backup directory.
    public static let manifestFile = "manifest.json"

    /// Copies the ledger at `path` into `directory` (created; it must not exist or be empty) and
    /// writes its manifest, dated `now`. The directory is made (or set, when it was there empty)
    /// 0700, and the copy and the manifest are created 0600.
    /// - Throws: ``LedgerStoreError`` `invalidArgument` when `directory` holds files or the ledger
    ///   does not exist; the driver's errors otherwise (a full disk, an unreadable file).
    @discardableResult
    public static func backup(ledgerAt path: String, to directory: URL, now: Date = Date()) throws -> LedgerBackupManifest {
        let files = FileManager.default
        guard files.fileExists(atPath: path) else {
            throw LedgerStoreError(.invalidArgument, "no ledger at \(path)")
        }
        if let contents = try? files.contentsOfDirectory(atPath: directory.path), !contents.isEmpty {
            throw LedgerStoreError(.invalidArgument, "\(directory.path) is not empty: a backup goes to a new directory")
        }
        try OwnerOnlyFiles.createDirectory(at: directory)
        try OwnerOnlyFiles.setMode(OwnerOnlyFiles.directoryMode, atPath: directory.path)
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        let source = try DatabasePool(path: path, configuration: configuration)
        let copy = directory.appendingPathComponent(ledgerFile)
        try OwnerOnlyFiles.createFile(atPath: copy.path)
        let destination = try DatabaseQueue(path: copy.path)
        try source.backup(to: destination)
        try source.close()
        let manifest = try destination.read { db in try Self.manifest(db, takenAt: now) }
        try destination.close()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        try OwnerOnlyFiles.write(encoder.encode(manifest), to: directory.appendingPathComponent(manifestFile))
        return manifest
    }

    /// The manifest of the backup in `directory`.
    /// - Throws: ``LedgerStoreError`` `invalidArgument` when it is missing or not a manifest this
    ///   version reads.
    public static func manifest(of directory: URL) throws -> LedgerBackupManifest {
        let url = directory.appendingPathComponent(manifestFile)
        guard let data = try? Data(contentsOf: url) else {
            throw LedgerStoreError(.invalidArgument, "\(url.path) cannot be read: not a ledger backup")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let manifest = try? decoder.decode(LedgerBackupManifest.self, from: data) else {
            throw LedgerStoreError(.invalidArgument, "\(url.path) is not a ledger backup's manifest")
        }
        guard manifest.format == LedgerBackupManifest.currentFormat, manifest.engine == "sqlite" else {
            throw LedgerStoreError(
                .invalidArgument, "\(url.path) describes a \(manifest.engine) backup of format \(manifest.format)")
        }
        return manifest
    }

    /// Puts the backup in `directory` in place as the ledger at `path` (created when missing), and
    /// makes the ledger 0600.
    /// The backup's schema must be one this version knows; a server brings an older one up to date
    /// when it starts.
    /// - Throws: ``LedgerStoreError`` `inUse` when a server (or any connection) has the ledger open;
    ///   `invalidArgument` when `directory` is not a backup this version can restore.
    @discardableResult
    public static func restore(from directory: URL, toLedgerAt path: String) throws -> LedgerBackupManifest {
        let manifest = try manifest(of: directory)
        guard LedgerSchema.migrations.contains(where: { $0.id == manifest.schemaVersion }) else {
            throw LedgerStoreError(
                .invalidArgument,
                "the backup's schema \(manifest.schemaVersion) is newer than this version of Kakin: restore it with that version")
        }
        let copy = directory.appendingPathComponent(ledgerFile)
        guard FileManager.default.fileExists(atPath: copy.path) else {
            throw LedgerStoreError(.invalidArgument, "\(copy.path) is missing: not a ledger backup")
        }
        var sourceConfiguration = Configuration()
        sourceConfiguration.readonly = true
        let source = try DatabaseQueue(path: copy.path, configuration: sourceConfiguration)
        defer { try? source.close() }
        let stored = try source.read { db in try Self.manifest(db, takenAt: manifest.takenAt) }
        guard stored.schemaVersion == manifest.schemaVersion, stored.transactions == manifest.transactions else {
            throw LedgerStoreError(.invalidArgument, "\(copy.path) does not match its manifest")
        }
        // In exclusive locking mode the connection takes the file's lock at its first transaction
        // and keeps it until it closes: the take fails at once while any other connection, in any
        // process, has the ledger open, and no server can open it while the copy is made.
        var targetConfiguration = Configuration()
        targetConfiguration.busyMode = .immediateError
        targetConfiguration.prepareDatabase { db in try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE") }
        let target: DatabaseQueue
        try OwnerOnlyFiles.createFile(atPath: path)
        do {
            // GRDB reads the schema as it opens the file: that read already takes the lock.
            target = try DatabaseQueue(path: path, configuration: targetConfiguration)
            try target.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN EXCLUSIVE")
                try db.execute(sql: "COMMIT")
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            throw LedgerStoreError(.inUse, "the ledger at \(path) is open: stop every server using it before a restore")
        }
        defer { try? target.close() }
        // Held exclusively from here: the ledger and any log beside it become owner-only before
        // the backup's bytes reach them.
        for file in [path, path + "-wal", path + "-shm"] where OwnerOnlyFiles.mode(atPath: file) != nil {
            try OwnerOnlyFiles.setMode(OwnerOnlyFiles.fileMode, atPath: file)
        }
        try target.writeWithoutTransaction { db in try source.read { sourceDB in try sourceDB.backup(to: db) } }
        return manifest
    }

    /// The manifest of the database `db` reads, dated `takenAt`.
    static func manifest(_ db: Database, takenAt: Date) throws -> LedgerBackupManifest {
        // Migration IDs begin with their number: the greatest is the latest.
        guard let schema = try String.fetchOne(db, sql: "SELECT MAX(identifier) FROM grdb_migrations") else {
            throw LedgerStoreError(.invalidArgument, "the database has no ledger schema")
        }
        let last = try Row.fetchOne(db, sql: "SELECT id, created_at FROM events ORDER BY id DESC LIMIT 1")
        return LedgerBackupManifest(
            schemaVersion: schema, takenAt: takenAt, lastEventID: last?["id"],
            lastEventAt: (last?["created_at"] as Int64?).map(LedgerTime.date),
            transactions: try Int64.fetchOne(db, sql: "SELECT COUNT(*) FROM transactions") ?? 0)
    }
}
