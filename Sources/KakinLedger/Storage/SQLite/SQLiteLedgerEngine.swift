import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import Synchronization

/// The SQLite side of the ledger, on SQLite's documented durability:
///
/// - **One writer, group commit** (a ``GroupCommitWriter``, the same write path as PostgreSQL's).
///   Every write transaction is a job for the single writer connection, which runs on a thread of
///   its own, takes every job waiting, runs them in one transaction and commits once. The database
///   is in WAL mode with `synchronous = FULL`: SQLite flushes the log at every commit, before the
///   commit returns, so a job answered after its group's commit is on disk, and the group shares
///   one flush.
/// - **Readers beside it.** In WAL mode readers never wait for the writer; each read runs on a
///   connection leased from a bounded pool, on the caller's own thread.
/// - **Prepared statements** stay prepared on every connection, and nothing hops between threads
///   per statement.
/// - **Checkpoints beside it.** The writer does not copy the write-ahead log back into the
///   database file at its commits: a ``SQLiteCheckpointer`` does, on its own connection and
///   thread, once the log holds ``LogLimits/checkpointPages`` pages, and then every
///   ``LogLimits/stepPages`` pages. When the log reaches ``LogLimits/restartPages`` and no
///   checkpoint is running, the writer copies the little that is left itself, so the log starts
///   over instead of growing without end.
///
/// Only SQLite's documented interfaces are used: pragmas, `sqlite3_wal_hook` and
/// `wal_checkpoint`. An in-memory database has a single connection, so reads go through the writer
/// too.
final class SQLiteLedgerEngine: Sendable {
    private let writer: SQLiteHandle
    private let writerExecutor: SQLiteThreadExecutor
    private let groups: GroupCommitWriter
    private let closed = Atomic<Bool>(false)
    private let readers = Mutex(ReaderPool())
    private let path: String?
    private let checkpointer: SQLiteCheckpointer?
    private let pragmas: [String]
    let eventLoop: any EventLoop
    let logger: Logger
    /// The writer's page cache, in KiB.
    static let writerCacheKiB = 32 * 1024
    /// When the write-ahead log is copied back into the database file.
    struct LogLimits: Sendable {
        /// Log size (pages) from which the checkpointer is asked to run.
        var checkpointPages: Int
        /// Log size (pages) from which the writer finishes a checkpoint itself, so the log can reset.
        var restartPages: Int
        /// How much the log grows (pages) between two passes of the checkpointer.
        var stepPages: Int

        /// 128 MiB of log before a checkpoint (SQLite's own default is 4 MiB). Under load every
        /// commit touches index pages all over the file; the longer the log, the more often a
        /// page was written several times in it and is copied back once (64 MiB took about 5%
        /// less CPU per new purchase than 4 MiB, and 128 MiB about 4% less than 64 MiB once the
        /// log is in its steady cycle). The log file keeps its largest size, about 256 MiB at most.
        static let standard = LogLimits(checkpointPages: 32_000, restartPages: 64_000, stepPages: 2_000)
    }

    /// At most this many reader connections are open; more reads at once wait for one. A read
    /// holds its connection while its task waits to be run again between statements, so under
    /// load many are open at once; each keeps a page cache, so the bound is one on memory too.
    static let maxReaders = 64

    /// A reader's page cache, in KiB. Small: SQLite drops a reader's cache whenever another
    /// connection committed since its last read, so the operating system's cache does most of
    /// the work, and many readers with SQLite's default cache (2 MiB) each add up.
    static let readerCacheKiB = 128

    /// The reader connections: idle ones, how many are open in all, and who waits for one.
    private struct ReaderPool {
        var idle: [SQLiteHandle] = []
        var open = 0
        /// Resumed with a reader, or with `nil` to open one in a place another caller gave up.
        var waiters: [CheckedContinuation<SQLiteHandle?, Never>] = []
    }

    /// Opens the database (`nil` or `:memory:` for memory) and sets it up for WAL and durability.
    init(path: String?, busyTimeoutMilliseconds: Int64, logLimits: LogLimits = .standard, logger: Logger) throws {
        self.logger = logger
        eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        let file = path.flatMap { $0 == ":memory:" ? nil : $0 }
        self.path = file
        // Temporary storage in memory: above all the journal of each job's savepoint (when a group
        // runs again after a failure), which would otherwise spill to a temporary file once a
        // group's jobs have touched more than 64 KiB.
        pragmas = [
            "PRAGMA busy_timeout = \(max(busyTimeoutMilliseconds, 0))", "PRAGMA foreign_keys = ON",
            "PRAGMA temp_store = MEMORY",
        ]
        writer = try SQLiteHandle(path: file ?? ":memory:")
        for pragma in pragmas { try writer.execute(pragma) }
        // A larger page cache for the writer, which touches index pages all over the file.
        try writer.execute("PRAGMA cache_size = -\(Self.writerCacheKiB)")
        if file != nil {
            _ = try writer.query("PRAGMA journal_mode = WAL", [])
            // In WAL mode FULL flushes the log at every commit, before the commit returns: a
            // commit that returned survives a crash of the process and of the machine.
            try writer.execute("PRAGMA synchronous = FULL")
            writer.trackWriteAheadLog()
        }
        let pragmas = self.pragmas
        let checkpointer = file.map { SQLiteCheckpointer(path: $0, pragmas: pragmas, logger: logger) }
        self.checkpointer = checkpointer
        let writerExecutor = SQLiteThreadExecutor(name: "ledger.writer")
        self.writerExecutor = writerExecutor
        let connection = SQLiteWriterConnection(
            handle: writer, database: SQLiteHandleDatabase(handle: writer, eventLoop: eventLoop, logger: logger))
        let lastRequest = CheckpointRequests()
        groups = GroupCommitWriter(
            .init(
                begin: "BEGIN IMMEDIATE", executor: writerExecutor,
                closedError: { LedgerStoreError(.unavailable, "the SQLite store was shut down") },
                afterCommit: { [writer] in
                    Self.checkpointIfLarge(
                        writer: writer, checkpointer: checkpointer, limits: logLimits, lastRequest: lastRequest,
                        logger: logger)
                })
        ) { body in try await body(connection) }
    }

    /// Whether the writer has jobs waiting or running (a check for tests).
    var isWriting: Bool { groups.isWriting }

    /// Stops taking jobs, lets the writer finish what it has, and stops its thread.
    func close() async {
        closed.store(true, ordering: .relaxed)
        await groups.close()
        writerExecutor.stop()
        await checkpointer?.close()
        readers.withLock { $0.idle.removeAll() }
    }

    // MARK: Writes

    /// Runs `body` as one write transaction, committed with whatever other writes are waiting.
    func write<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await groups.write(body)
    }

    /// After a commit: hands a grown log to the checkpointer, or, when it is large and the
    /// checkpointer idle, copies the rest on the writer so that the next write starts the log over.
    private static func checkpointIfLarge(
        writer: SQLiteHandle, checkpointer: SQLiteCheckpointer?, limits: LogLimits, lastRequest: CheckpointRequests,
        logger: Logger
    ) {
        guard let checkpointer else { return }
        let pages = writer.writeAheadLogPages
        // A log shorter than at the last request has started over since: no request counts yet.
        let requested = lastRequest.pages.load(ordering: .relaxed)
        let last = pages < requested ? 0 : requested
        guard pages >= limits.checkpointPages else { return }
        guard pages >= limits.restartPages else {
            // A pass every `stepPages`, and after every commit near the end, so that little is
            // left for the writer to copy when the log reaches `restartPages`.
            guard pages >= last + limits.stepPages || pages >= limits.restartPages - limits.stepPages
            else { return }
            lastRequest.pages.store(pages, ordering: .relaxed)
            return checkpointer.request()
        }
        // No more requests: the running pass ends soon, and the next commit finishes the rest.
        guard !checkpointer.isRunning else { return }
        do { try writer.execute("PRAGMA wal_checkpoint(PASSIVE)") } catch {
            logger.warning("checkpoint failed", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Reads

    /// Runs `body` in one read transaction on a connection of its own (through the writer for an
    /// in-memory database).
    func read<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        guard let path else { return try await write(body) }
        guard !closed.load(ordering: .relaxed) else {
            throw LedgerStoreError(.unavailable, "the SQLite store was shut down")
        }
        let handle = try await leaseReader(path)
        let result: R
        do {
            defer { handOver(handle) }
            try handle.execute("BEGIN")
            do {
                result = try await body(SQLiteHandleDatabase(handle: handle, eventLoop: eventLoop, logger: logger))
                try handle.execute("COMMIT")
            } catch {
                try? handle.execute("ROLLBACK")
                throw error
            }
        }
        return result
    }

    /// Re-compilations per statement on the writer and the idle readers (a check for tests).
    func reprepareCounts() async throws -> [String: Int32] {
        var counts = try await write { db -> [String: Int32] in
            (db as? SQLiteHandleDatabase)?.handle.reprepareCounts() ?? [:]
        }
        for reader in readers.withLock({ $0.idle }) { counts.merge(reader.reprepareCounts()) { $0 + $1 } }
        return counts
    }

    /// How many reader connections are open (a check for tests).
    var openReaders: Int { readers.withLock { $0.open } }

    /// An idle reader, a new one while fewer than ``maxReaders`` are open, or else the next one
    /// given back.
    private func leaseReader(_ path: String) async throws -> SQLiteHandle {
        // Without suspending when a reader is free: a suspension would send the task through
        // the executor's queue once more.
        if let now = readers.withLock({ pool in Self.lease(from: &pool) }) {
            return try now ?? openReader(path)
        }
        let leased: SQLiteHandle? = await withCheckedContinuation { continuation in
            let now = readers.withLock { pool -> SQLiteHandle?? in
                if let now = Self.lease(from: &pool) { return now }
                pool.waiters.append(continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
        return try leased ?? openReader(path)
    }

    /// An idle reader, `.some(nil)` for a place to open a new one, or `nil` when the caller must
    /// wait.
    private static func lease(from pool: inout ReaderPool) -> SQLiteHandle?? {
        if let handle = pool.idle.popLast() { return .some(handle) }
        guard pool.open < maxReaders else { return nil }
        pool.open += 1
        return .some(nil)
    }

    /// Opens a reader in a place this caller holds, or gives the place to the next waiter when
    /// that fails.
    private func openReader(_ path: String) throws -> SQLiteHandle {
        do {
            let handle = try SQLiteHandle(path: path)
            for pragma in pragmas { try handle.execute(pragma) }
            try handle.execute("PRAGMA cache_size = -\(Self.readerCacheKiB)")
            return handle
        } catch {
            handOver(nil)
            throw error
        }
    }

    /// Passes a reader, or with `nil` the place of one that could not be opened, to the longest
    /// waiting caller; without one, the reader goes idle and the place is freed.
    private func handOver(_ handle: SQLiteHandle?) {
        let waiter = readers.withLock { pool -> CheckedContinuation<SQLiteHandle?, Never>? in
            guard pool.waiters.isEmpty else { return pool.waiters.removeFirst() }
            if let handle { pool.idle.append(handle) } else { pool.open -= 1 }
            return nil
        }
        waiter?.resume(returning: handle)
    }
}

/// The log's size when the checkpointer was last asked to run (used by the writer only).
private final class CheckpointRequests: Sendable {
    let pages = Atomic<Int>(0)
}

/// The writer's connection, as the group-commit writer uses it.
private struct SQLiteWriterConnection: GroupCommitConnection {
    let handle: SQLiteHandle
    let database: any SQLDatabase
    var isBroken: Bool { false }

    func execute(_ sql: String) async throws {
        try handle.execute(sql)
    }
}

/// A connection seen through SQLKit: each statement runs at once on the connection, on the
/// calling thread.
struct SQLiteHandleDatabase: SQLDatabase {
    let handle: SQLiteHandle
    let eventLoop: any EventLoop
    let logger: Logger
    var dialect: any SQLDialect { SQLiteDialect() }
    var queryLogLevel: Logger.Level? { nil }

    /// Runs `query` at once on the connection and returns its rows.
    func rows(_ query: any SQLExpression) throws -> [SQLiteResultRow] {
        let (sql, binds) = serialize(query)
        return try handle.query(sql, binds)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        for row in try rows(query) { onRow(row) }
    }

    func execute(
        sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void
    ) -> EventLoopFuture<Void> {
        do {
            for row in try rows(query) { onRow(row) }
            return eventLoop.makeSucceededVoidFuture()
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await closure(self)
    }
}

/// The engine seen through SQLKit, for statements run on their own: a `SELECT` runs on a reader,
/// anything else is a write transaction of its own (committed with the writer's next group).
struct SQLiteEngineDatabase: SQLDatabase {
    let engine: SQLiteLedgerEngine
    var eventLoop: any EventLoop { engine.eventLoop }
    var logger: Logger { engine.logger }
    var dialect: any SQLDialect { SQLiteDialect() }
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        let (sql, binds) = serialize(query)
        let run: @Sendable (any SQLDatabase) async throws -> [SQLiteResultRow] = { db in
            guard let connection = db as? SQLiteHandleDatabase else {
                throw LedgerStoreError(.inconsistentState, "the SQLite engine lent a foreign connection")
            }
            return try connection.handle.query(sql, binds)
        }
        let isRead = sql.prefix(6).uppercased() == "SELECT"
        let rows = isRead ? try await engine.read(run) : try await engine.write(run)
        for row in rows { onRow(row) }
    }

    func execute(
        sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void
    ) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await closure(self)
    }
}

extension SQLDatabase {
    /// Every row of `query`, run through SQLKit.
    func collectRows(_ query: any SQLExpression) async throws -> [any SQLRow] {
        let rows = Mutex<[any SQLRow]>([])
        try await execute(sql: query) { row in rows.withLock { $0.append(row) } }
        return rows.withLock { $0 }
    }
}

extension SQLRawBuilder {
    /// The statement's rows. On a connection of the SQLite engine the statement runs at once on
    /// the calling thread; SQLKit's `all()` would first leave the caller's executor (its
    /// `execute` is a concurrent `async` requirement), which on an event loop means queueing the
    /// task again for every statement. Any other database goes through SQLKit.
    func rows() async throws -> [any SQLRow] {
        let (database, query) = (self.database, self.query)
        guard let connection = database as? SQLiteHandleDatabase else { return try await database.collectRows(query) }
        return try connection.rows(query)
    }

    /// The statement's first row, as ``rows()`` runs it.
    func row() async throws -> (any SQLRow)? {
        try await rows().first
    }
}
