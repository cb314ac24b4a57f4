import Foundation
import GRDB
import KakinCore
import Synchronization

/// The ledger in a SQLite database, through GRDB.
///
/// Every guarantee of ``LedgerStore`` is held by the database: primary and unique keys written
/// with `INSERT … ON CONFLICT DO NOTHING` (the change count tells whether a call wrote its row),
/// owners filled in once (`UPDATE … WHERE app_user_id IS NULL`), revocations once per share,
/// spends never below zero (`UPDATE … WHERE amount >= ?`), and everything one call changes
/// (rows, ledger lines, balances, outbox events, calls owed to Apple) committed together.
///
/// - **Writes** go through one ``GroupCommit``: the writes waiting at the same moment run in one
///   `BEGIN IMMEDIATE` transaction on GRDB's writer connection and share one commit (one flush).
///   When one of them fails, the group runs again with a savepoint per write, so that only the
///   failing write is undone.
/// - **Reads** run on GRDB's readers: on a file, each read sees one snapshot of the write-ahead
///   log and never waits for the writer.
/// - **Durability**: a file is in WAL mode with `synchronous = FULL`, so a write answered after its
///   group's commit survives a crash of the process or the machine. Checkpoints run after the
///   commits on a connection of their own (``SQLiteCheckpoints``), so the writes do not wait for
///   them; SQLite's automatic one (at the commit that takes the log past 1000 pages) finishes
///   what they left and lets the log start over, and `journal_size_limit` shrinks the log file
///   back then. In a large ledger every write changes index pages far apart: the writer's page
///   cache (``writerCacheKiB``) keeps those it changes at hand. (A log of 32 MiB between
///   checkpoints was tried at a million transactions: the rates held and the p99 latency doubled,
///   each checkpoint stalling the writes longer.)
///
/// One server uses a SQLite file at a time, so ``exclusively(_:_:)`` always runs its body.
public final class SQLiteLedger: LedgerStore {
    /// The database: a pool (one writer, concurrent snapshot readers) on a file, a queue in memory.
    let writer: any DatabaseWriter
    /// Every write of the ledger.
    let writes: GroupCommit<SQLiteCommitEngine>
    /// The checkpoints of a file's log, off the writer (none in memory).
    let checkpoints: SQLiteCheckpoints?
    /// Set by ``shutdown()``: reads are refused from then on.
    private let closed = Atomic<Bool>(false)

    /// The largest the write-ahead log file stays once a checkpoint let it start over, in bytes.
    static let journalSizeLimit = 8 * 1024 * 1024
    /// The writer's page cache, in KiB (readers keep SQLite's default).
    static let writerCacheKiB = 64 * 1024

    /// Opens a SQLite ledger. Call ``migrate()`` before first use and ``shutdown()`` at the end.
    ///
    /// - Parameters:
    ///   - path: a file, created if needed with mode 0600 (readable and writable by its owner
    ///     only, whatever the umask; SQLite gives its `-wal` and `-shm` files the same mode); `nil`
    ///     or `":memory:"` for a private in-memory database, gone at shutdown.
    ///   - busyTimeout: how long a write waits for another process's transaction to finish.
    public init(path: String?, busyTimeout: Duration = .seconds(10)) throws {
        do {
            if let path, path != ":memory:" {
                // Made empty with its final mode before SQLite opens it (SQLite would create it
                // 0644 less the umask): an empty file is an empty database.
                do { try OwnerOnlyFiles.createFile(atPath: path) } catch {
                    throw LedgerStoreError(.unavailable, "SQLite: \(path) cannot be created: \(error)")
                }
                var configuration = Configuration()
                let timeout = busyTimeout.components
                configuration.busyMode = .timeout(Double(timeout.seconds) + Double(timeout.attoseconds) / 1e18)
                configuration.prepareDatabase { db in
                    // FULL flushes the log at every commit, before the commit returns. Temporary
                    // storage (the journals of a group's savepoints) stays in memory.
                    try db.execute(
                        sql: """
                            PRAGMA synchronous = FULL;
                            PRAGMA journal_size_limit = \(Self.journalSizeLimit);
                            PRAGMA temp_store = MEMORY
                            """)
                }
                let pool = try DatabasePool(path: path, configuration: configuration)
                // The pool sets `synchronous = NORMAL` on its writer when it turns WAL on, after
                // `prepareDatabase` ran: the writer is set to FULL again.
                try pool.writeWithoutTransaction {
                    try $0.execute(
                        sql: """
                            PRAGMA synchronous = FULL;
                            PRAGMA cache_size = -\(Self.writerCacheKiB)
                            """)
                }
                writer = pool
                checkpoints = try SQLiteCheckpoints(path: path, configuration: configuration)
            } else {
                writer = try DatabaseQueue()
                checkpoints = nil
            }
        } catch {
            throw Self.ledgerError(error)
        }
        writes = GroupCommit(SQLiteCommitEngine(writer: writer, checkpoints: checkpoints))
    }

    /// Applies the migrations this database has not seen, each in its own transaction, with
    /// GRDB's migrator (applied IDs are kept in `grdb_migrations`).
    ///
    /// A database the ledger's earlier SQLite engine made lists its applied migrations in a
    /// `migrations` table instead: those IDs are copied to `grdb_migrations` first (once, when
    /// that table does not exist yet), so they are not run again.
    public func migrate() async throws {
        var migrator = DatabaseMigrator()
        for migration in LedgerSchema.migrations {
            let statements = migration.statements(.sqlite)
            migrator.registerMigration(migration.id) { db in
                for statement in statements { try db.execute(sql: statement) }
            }
        }
        do {
            try await writer.writeWithoutTransaction { db in
                guard try db.tableExists(LedgerSchema.migrationsTable), try !db.tableExists("grdb_migrations")
                else { return }
                try db.inTransaction(.immediate) {
                    try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
                    try db.execute(
                        sql: "INSERT INTO grdb_migrations (identifier) SELECT id FROM \(LedgerSchema.migrationsTable)")
                    return .commit
                }
            }
            // GRDB's migrator keeps the migrations of one pool apart, not those of several
            // processes on one file: another server starting at the same moment may apply a
            // migration between this one's look at what is applied and its run of it. The run that
            // fails is rolled back and starts over, and then finds that migration applied.
            var attempt = 1
            while true {
                do {
                    try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                        migrator.asyncMigrate(writer) { result in done.resume(with: result.map { _ in () }) }
                    }
                    // Purchases other than subscriptions settled first: the prices filled in then
                    // are kept in the metrics by the pass's writes.
                    try await settlePurchaseMetrics()
                    return try await backfillPrices()
                } catch let error as DatabaseError where attempt < 5 {
                    guard error.resultCode == .SQLITE_ERROR || error.resultCode == .SQLITE_CONSTRAINT else { throw error }
                    attempt += 1
                }
            }
        } catch {
            throw Self.ledgerError(error)
        }
    }

    public func shutdown() async throws {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        await writes.close()
        try await checkpoints?.close()
        // A barrier runs once the reads in flight are done.
        try await writer.barrierWriteWithoutTransaction { _ in }
        // GRDB's close waits, blocking, until every connection is back in the pool: on a thread
        // of its own, so that a read started just before it can still be answered (in `kakin`,
        // tasks run on the event loops, and a loop blocked here was the one the read needed).
        let writer = writer
        try await withCheckedThrowingContinuation { (closed: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread {
                do {
                    try writer.close()
                    closed.resume()
                } catch {
                    closed.resume(throwing: error)
                }
            }
        }
    }

    /// A warning when the ledger file at `path`, or its `-wal` or `-shm` file, can be read or
    /// written by anyone but its owner (group or other permission bits set); `nil` when none can
    /// (or none exists). A server logs it at start: the ledger holds every customer's signed
    /// transactions. Ledgers this version creates are 0600; one created before, or copied with
    /// other permissions, is not changed, and the warning says how to narrow it.
    public static func permissionWarning(path: String) -> String? {
        guard path != ":memory:" else { return nil }
        let loose = [path, path + "-wal", path + "-shm"].compactMap { file -> String? in
            guard let mode = OwnerOnlyFiles.mode(atPath: file), mode & 0o077 != 0 else { return nil }
            return "\(file) (mode \(String(mode, radix: 8)))"
        }
        guard !loose.isEmpty else { return nil }
        return "the SQLite ledger is readable or writable by users other than its owner: "
            + loose.joined(separator: ", ")
            + "; it holds every customer's signed transactions: chmod 600 \(path) \(path)-wal \(path)-shm"
    }

    public func ping() async throws {
        try await read { db in try db.execute(sql: "SELECT 1") }
    }

    /// Runs `body`: one server uses a SQLite file, so nobody else runs `job`.
    public func exclusively<R: Sendable>(
        _ job: ExclusiveJob, _ body: @escaping @Sendable () async throws -> R
    ) async throws -> R? {
        try await body()
    }

    // MARK: Running statements

    /// Runs `body` as one write, committed with the writes waiting at the same moment; rolled back
    /// alone when it throws.
    @discardableResult
    func write<R: Sendable>(_ body: @escaping @Sendable (Database) throws -> R) async throws -> R {
        try await submit(.run { db in try body(db) })
    }

    /// Commits `write` with the writes waiting at the same moment; its result as `R`.
    func submit<R: Sendable>(_ write: SQLiteWrite) async throws -> R {
        let value: any Sendable
        do {
            value = try await writes.submit(write)
        } catch {
            throw Self.ledgerError(error)
        }
        guard let result = value as? R else {
            throw LedgerStoreError(.inconsistentState, "a write answered a \(type(of: value)), not a \(R.self)")
        }
        return result
    }

    /// Runs `body` on one snapshot of the database.
    func read<R: Sendable>(_ body: @escaping @Sendable (Database) throws -> R) async throws -> R {
        try checkOpen()
        do {
            return try await writer.read(body)
        } catch {
            throw Self.ledgerError(error)
        }
    }

    /// Runs `body`, a read of one statement, at once on the calling thread (GRDB's synchronous
    /// read), for the short, indexed reads every request makes (a duplicate's lookup, a summary),
    /// which take less time than handing them to a reader's queue and back. No transaction is
    /// opened around it: SQLite runs each statement on one snapshot of the database, and GRDB's
    /// isolated reads, which open and close a transaction for each read, cost an upload's lookup
    /// by digest more than its statement. `body` runs one statement only: two would each see the
    /// database as it was when they ran.
    func readStatementNow<R>(_ body: (Database) throws -> R) throws -> R {
        try checkOpen()
        do {
            return try writer.unsafeRead(body)
        } catch {
            throw Self.ledgerError(error)
        }
    }

    /// Refuses a read once the ledger was shut down.
    private func checkOpen() throws {
        guard !closed.load(ordering: .acquiring) else {
            throw LedgerStoreError(.unavailable, "the ledger was shut down")
        }
    }

    /// SQLite's errors as the ledger reports them: a full disk is `diskFull`; a busy, locked,
    /// broken or closed database (GRDB reports a use after ``shutdown()`` as misuse) is
    /// unavailable, any other is an inconsistent state. Other errors pass as they are.
    static func ledgerError(_ error: any Error) -> any Error {
        guard let error = error as? DatabaseError else { return error }
        if error.resultCode == .SQLITE_FULL {
            return LedgerStoreError(.diskFull, "SQLite: \(error.message ?? "database or disk is full")")
        }
        let unavailable: [ResultCode] = [
            .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_NOMEM, .SQLITE_MISUSE,
        ]
        let code: LedgerStoreError.Code = unavailable.contains(error.resultCode) ? .unavailable : .inconsistentState
        return LedgerStoreError(code, "SQLite: \(error.message ?? "\(error.resultCode)") (\(error.sql ?? ""))")
    }
}

/// A write the SQLite writer commits.
typealias SQLiteWrite = LedgerWrite<@Sendable (Database) throws -> any Sendable>

extension LedgerWrite where Job == @Sendable (Database) throws -> any Sendable {
    /// Runs `writes` in order in the write open on `db`, each run of consecutive ingests together
    /// (``SQLiteLedger/ingest(_:_:)``).
    static func run(_ writes: [Self], _ db: Database) throws -> [any Sendable] {
        var results: [any Sendable] = []
        for step in steps(writes) {
            switch step {
            case .ingests(let changes): results += try SQLiteLedger.ingest(changes, db) as [any Sendable]
            case .job(let job): results.append(try job(db))
            }
        }
        return results
    }
}

/// The group commit's engine on GRDB: a group is one `BEGIN IMMEDIATE` transaction on the
/// writer, with a savepoint per job when it is isolated.
struct SQLiteCommitEngine: GroupCommitEngine {
    typealias Job = SQLiteWrite

    let writer: any DatabaseWriter
    /// Told of each commit.
    let checkpoints: SQLiteCheckpoints?

    func commit(_ jobs: [Job], isolated: Bool) async throws -> [Result<any Sendable, any Error>] {
        defer { checkpoints?.committed() }
        return try await writer.writeWithoutTransaction { db in
            var results: [Result<any Sendable, any Error>] = []
            try db.inTransaction(.immediate) {
                guard isolated else {
                    results = try SQLiteWrite.run(jobs, db).map { .success($0) }
                    return .commit
                }
                results = []
                for job in jobs {
                    var value: [any Sendable] = []
                    do {
                        try db.inSavepoint {
                            value = try SQLiteWrite.run([job], db)
                            return .commit
                        }
                        results.append(.success(value[0]))
                    } catch {
                        results.append(.failure(error))
                    }
                }
                return .commit
            }
            return results
        }
    }
}

extension Database {
    /// The rows of `sql`, a statement kept prepared.
    func rows(_ sql: String, _ arguments: StatementArguments = []) throws -> [Row] {
        try Row.fetchAll(cachedStatement(sql: sql), arguments: arguments)
    }
}

extension Row {
    /// The column's value as `T` (`nil` for `NULL` when `T` is optional); throws on a mismatch.
    func value<T: DatabaseValueConvertible>(_ column: String, _ type: T.Type = T.self) throws -> T {
        try decode(T.self, forColumn: column)
    }
}
