import Foundation
import NIOCore
import NIOPosix
import SQLKit
import Synchronization

/// A connection the ``GroupCommitWriter`` writes through: one connection to the database, used by
/// one group at a time.
protocol GroupCommitConnection: Sendable {
    /// The connection as the ledger's operations see it.
    var database: any SQLDatabase { get }
    /// Runs a statement without results (`BEGIN`, `COMMIT`, `SAVEPOINT`…).
    func execute(_ sql: String) async throws
    /// Whether the connection can take no more statements (closed by the server, or broken).
    var isBroken: Bool { get }
    /// Told of every failure of a job or statement, so that a connection that is gone is known
    /// as ``isBroken`` before anything more is sent on it.
    func failed(_ error: any Error)
    /// Where a group's jobs run when the writer runs them in a task of their own (with a group
    /// time limit): the connection's own executor, if it has one.
    var executor: (any TaskExecutor)? { get }
}

extension GroupCommitConnection {
    func failed(_ error: any Error) {}
    var executor: (any TaskExecutor)? { nil }
}

/// The ledger's one write path, the same for SQLite and PostgreSQL: write transactions queue for a
/// single writer per process, which runs a group of them in one database transaction and commits
/// once.
///
/// - A group is everything waiting when the writer takes its next group, up to ``maxGroup`` jobs.
/// - Jobs run one after the other on the writer's connection, without savepoints at first: jobs
///   almost never fail, and a savepoint costs a copy of each page (SQLite) or a round trip
///   (PostgreSQL). When one does fail, the group is undone and run again with one savepoint per
///   job, so that a failed job is rolled back alone and the others commit.
/// - Each job is answered after the commit that holds it returned, so an answer always means the
///   write is durable (SQLite with `synchronous = FULL`, PostgreSQL with `synchronous_commit = on`).
///   When the commit fails, or its outcome is unknown because the connection broke, every job of the
///   group gets the failure: nothing is acknowledged without its commit, and the ledger's unique keys
///   make a retry safe.
/// - Rows a job only adds and never reads back (the outbox's events) are kept aside while the
///   group runs and written for the whole group at once, a few multi-row `INSERT`s before the
///   commit (``deferredRows``), instead of one round trip each.
/// - A write started from inside a job joins the job's transaction as a nested savepoint.
/// - An engine may do the commonest job for a whole group in a statement of its own that commits
///   alone (``Settings/batch``: PostgreSQL's new purchases, one round trip for a group of them);
///   the jobs it leaves then run in the group's transaction as above.
///
/// Where the connection comes from is the engine's business (`connect`): SQLite's writer keeps one
/// connection on a thread of its own; PostgreSQL's leases one from the pool for as long as there are
/// jobs, and a lease that cannot be had in time fails the jobs waiting for it.
final class GroupCommitWriter: Sendable {
    typealias Body = @Sendable (any SQLDatabase) async throws -> any Sendable
    /// Lends the writer a connection for as long as `body` runs.
    typealias Connect = @Sendable (_ body: @escaping @Sendable (any GroupCommitConnection) async throws -> Void)
        async throws -> Void

    /// One write transaction waiting for the writer.
    private struct Job: Sendable {
        let body: Body
        /// What the job does, as ``Settings/batch`` takes it, when the engine can do it for the
        /// whole group at once.
        let batchItem: (any Sendable)?
        let continuation: CheckedContinuation<any Sendable, any Error>
        /// The event loop the caller waits on, where its answer is handed back (`nil`: any).
        let home: (any EventLoop)?
    }

    private struct Queue {
        var jobs: [Job] = []
        var draining = false
        var closed = false
        /// Who waits for the writer to run dry (``close()``).
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// What the engine decides about the writer.
    struct Settings: Sendable {
        /// The statement that opens a group's transaction.
        var begin: String
        /// The most jobs one commit carries.
        var maxGroup: Int = 256
        /// Where the writer's loop runs (`nil`: the global executor).
        var executor: (any TaskExecutor)?
        /// The error jobs get once the writer is closed.
        var closedError: @Sendable () -> any Error
        /// Whether a whole group failed in a way worth running it again at once (PostgreSQL's
        /// deadlock victims and serialization failures); how many times.
        var rerunsGroup: @Sendable (any Error) -> Bool = { _ in false }
        var attempts = 5
        /// Runs after every successful commit, on the writer (SQLite's checkpoints).
        var afterCommit: @Sendable () -> Void = {}
        /// Turns a failure of the writer's own statements (`BEGIN`, `COMMIT`) into the ledger's error.
        var mapError: @Sendable (any Error) -> any Error = { $0 }
        /// Does the work of several jobs of a group in a few statements (PostgreSQL's new
        /// purchases): given the batch items of the group's jobs in order, returns each job's
        /// result, or `nil` for a job whose `body` must run instead (after the batch, in the
        /// group's transaction). The batch runs before that transaction, outside it: each of its
        /// statements must commit on its own, all or nothing, and its results are answered only
        /// once it returned. A batch that fails decides nothing: every job then runs its `body`,
        /// so the batch must only ever do what the bodies would have done.
        var batch: (@Sendable (_ items: [any Sendable], _ database: any SQLDatabase) async throws -> [(any Sendable)?])?
        /// How long a group may run before its jobs are answered ``LedgerStoreError/Code/unavailable``
        /// and its connection is given up (`nil`: no limit). A database that stopped answering
        /// then holds no request longer than this, even if its client never returns.
        var groupLimit: Duration?
    }

    private let queue = Mutex(Queue())
    private let settings: Settings
    private let largestBatch = Atomic<Int>(0)

    /// The most jobs ``Settings/batch`` decided in one group so far.
    var largestBatchDecided: Int { largestBatch.load(ordering: .relaxed) }
    private let connect: Connect

    init(_ settings: Settings, connect: @escaping Connect) {
        self.settings = settings
        self.connect = connect
    }

    /// Whether the writer has jobs waiting or running (a check for tests).
    var isWriting: Bool { queue.withLock { $0.draining || !$0.jobs.isEmpty } }

    /// Set while a job runs: a write started from inside it joins it (as a nested savepoint)
    /// instead of waiting for a writer that is waiting for it.
    @TaskLocal private static var current: (writer: ObjectIdentifier, connection: any GroupCommitConnection)?

    /// Set while a job of a group runs without savepoints: where it puts the rows it only adds
    /// (``DeferredRows/add(_:_:)``) for the writer to insert before the group's commit. `nil`
    /// elsewhere: the caller inserts them at once.
    @TaskLocal static var deferredRows: DeferredRows?

    /// Runs `body` as one write transaction, committed with whatever other writes are waiting.
    /// `batchItem`, when the engine batches (``Settings/batch``), is the same work as a value: the
    /// writer may do it together with other jobs' instead of running `body`, and then returns what
    /// ``Settings/batch`` returned for it, which must be an `R`.
    func write<R: Sendable>(
        batchItem: (any Sendable)? = nil, _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        if let current = Self.current, current.writer == ObjectIdentifier(self) {
            return try await nested(body, on: current.connection)
        }
        let result = try await withCheckedThrowingContinuation { continuation in
            let home = HomeLoop.current
            let job = Job(
                body: { try await body($0) }, batchItem: settings.batch == nil ? nil : batchItem,
                continuation: continuation, home: home)
            let start = queue.withLock { state -> Bool? in
                guard !state.closed else { return nil }
                state.jobs.append(job)
                guard !state.draining else { return false }
                state.draining = true
                return true
            }
            switch start {
            case nil: continuation.resume(throwing: settings.closedError())
            case true?: Task(executorPreference: settings.executor) { await self.drain() }
            case false?: break
            }
        }
        guard let typed = result as? R else {
            throw LedgerStoreError(.inconsistentState, "a write returned \(type(of: result)), not \(R.self)")
        }
        return typed
    }

    private func nested<R: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> R, on connection: any GroupCommitConnection
    ) async throws -> R {
        try await connection.execute("SAVEPOINT nested")
        let deferred = Self.deferredRows?.count
        do {
            let result = try await body(connection.database)
            try await connection.execute("RELEASE SAVEPOINT nested")
            return result
        } catch {
            try? await connection.execute("ROLLBACK TO SAVEPOINT nested")
            try? await connection.execute("RELEASE SAVEPOINT nested")
            if let deferred { Self.deferredRows?.truncate(to: deferred) }
            throw error
        }
    }

    /// Stops taking jobs and waits for the writer to finish what it has.
    func close() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let idle = queue.withLock { state -> Bool in
                state.closed = true
                guard state.draining || !state.jobs.isEmpty else { return true }
                state.idleWaiters.append(done)
                return false
            }
            if idle { done.resume() }
        }
    }

    // MARK: The writer

    /// The connection broke: the writer asks for another one.
    private struct Reconnect: Error {}

    /// Commits groups of waiting jobs until none is left, on connections `connect` lends.
    private func drain() async {
        while true {
            do {
                try await connect { connection in
                    while let group = self.nextGroup() {
                        await self.commit(group, on: connection)
                        if connection.isBroken { throw Reconnect() }
                    }
                }
                return
            } catch is Reconnect {
                continue
            } catch {
                // No connection: every job waiting now gets the reason, and the next job starts over.
                return failWaiting(with: error)
            }
        }
    }

    /// The next group, or `nil` (the writer stops draining) when no job waits.
    private func nextGroup() -> [Job]? {
        let (group, waiters) = queue.withLock { state -> ([Job], [CheckedContinuation<Void, Never>]) in
            let group = Array(state.jobs.prefix(settings.maxGroup))
            state.jobs.removeFirst(group.count)
            guard group.isEmpty else { return (group, []) }
            state.draining = false
            defer { state.idleWaiters = [] }
            return ([], state.idleWaiters)
        }
        guard group.isEmpty else { return group }
        for waiter in waiters { waiter.resume() }
        return nil
    }

    private func failWaiting(with error: any Error) {
        let (jobs, waiters) = queue.withLock { state -> ([Job], [CheckedContinuation<Void, Never>]) in
            defer {
                state.jobs = []
                state.draining = false
                state.idleWaiters = []
            }
            return (state.jobs, state.idleWaiters)
        }
        let failure = settings.mapError(error)
        Self.answer(jobs, Array(repeating: .failure(failure), count: jobs.count))
        for waiter in waiters { waiter.resume() }
    }

    /// Runs a group in one transaction and answers its jobs once the commit returned.
    private func commit(_ group: [Job], on connection: any GroupCommitConnection) async {
        var attempt = 1
        while true {
            let results: [Result<any Sendable, any Error>]
            if let limit = settings.groupLimit {
                guard
                    let finished = await Deadline.run(
                        limit, executor: connection.executor, { await self.run(group, on: connection) })
                else {
                    let error = LedgerStoreError(
                        .unavailable, "the database did not finish a write within \(limit); its connection was given up")
                    connection.failed(error)
                    return Self.answer(group, Array(repeating: .failure(error), count: group.count))
                }
                results = finished
            } else {
                results = await run(group, on: connection)
            }
            if case .failure(let error) = results.first, results.allSatisfy({ $0.isFailure }),
                settings.rerunsGroup(error), attempt < settings.attempts, !connection.isBroken
            {
                attempt += 1
                continue
            }
            return Self.answer(group, results)
        }
    }

    /// One attempt at a group: its results, committed or not. The jobs that carry batch items are
    /// done first, together (``Settings/batch``); the jobs the batch leaves run in one transaction.
    /// All of a group's jobs are answered after the commits that hold them, so any order among
    /// them is one in which they could have happened.
    private func run(_ group: [Job], on connection: any GroupCommitConnection) async -> [Result<any Sendable, any Error>] {
        let batched = await runBatch(group, on: connection)
        guard !batched.isEmpty else { return await transact(group, on: connection) }
        let rest = group.indices.filter { batched[$0] == nil }
        var results = [Result<any Sendable, any Error>?](repeating: nil, count: group.count)
        for (index, value) in batched { results[index] = .success(value) }
        if !rest.isEmpty {
            for (index, result) in zip(rest, await transact(rest.map { group[$0] }, on: connection)) {
                results[index] = result
            }
        }
        return results.map { $0 ?? .failure(LedgerStoreError(.inconsistentState, "a job of a group got no result")) }
    }

    /// Does the work of the group's jobs that carry batch items with ``Settings/batch``, outside
    /// any transaction of the writer's: what the batch decided, by the jobs' places in the group.
    /// A batch that fails decides nothing, and its jobs run their bodies.
    private func runBatch(_ group: [Job], on connection: any GroupCommitConnection) async -> [Int: any Sendable] {
        guard let batch = settings.batch else { return [:] }
        let indices = group.indices.filter { group[$0].batchItem != nil }
        guard !indices.isEmpty else { return [:] }
        do {
            let values = try await batch(indices.compactMap { group[$0].batchItem }, connection.database)
            guard values.count == indices.count else {
                throw LedgerStoreError(.inconsistentState, "a batch answered \(values.count) of \(indices.count) jobs")
            }
            var decided: [Int: any Sendable] = [:]
            for (index, value) in zip(indices, values) {
                if let value { decided[index] = value }
            }
            largestBatch.max(decided.count, ordering: .relaxed)
            if !decided.isEmpty { settings.afterCommit() }
            return decided
        } catch {
            connection.failed(error)
            return [:]
        }
    }

    /// Runs jobs in one transaction: without savepoints first, then, when one failed, all again
    /// with one savepoint each.
    private func transact(_ group: [Job], on connection: any GroupCommitConnection) async -> [Result<any Sendable, any Error>] {
        do {
            try await connection.execute(settings.begin)
        } catch {
            return Array(repeating: .failure(settings.mapError(error)), count: group.count)
        }
        let deferred = DeferredRows()
        var results = await Self.$deferredRows.withValue(deferred) {
            await run(group, on: connection, isolated: false)
        }
        if case .success? = results.last {
            do {
                try await deferred.insert(on: connection.database)
            } catch {
                connection.failed(error)
                results[results.count - 1] = .failure(error)
            }
        }
        if case .failure(let error)? = results.last {
            try? await connection.execute("ROLLBACK")
            // A single job, or a connection that can do no more, has nothing to gain from a second run.
            if group.count == 1 || connection.isBroken {
                return Array(repeating: .failure(error), count: group.count)
            }
            do {
                try await connection.execute(settings.begin)
            } catch {
                return Array(repeating: .failure(settings.mapError(error)), count: group.count)
            }
            results = await run(group, on: connection, isolated: true)
            // The whole group failed (the connection went away mid-run): nothing to commit.
            if results.allSatisfy(\.isFailure) {
                try? await connection.execute("ROLLBACK")
                return results
            }
        }
        do {
            try await connection.execute("COMMIT")
            settings.afterCommit()
            return results
        } catch {
            try? await connection.execute("ROLLBACK")
            return Array(repeating: .failure(settings.mapError(error)), count: group.count)
        }
    }

    /// Runs jobs in the open transaction, each in a savepoint of its own when `isolated`; stops at
    /// the first failure otherwise.
    private func run(
        _ group: [Job], on connection: any GroupCommitConnection, isolated: Bool
    ) async -> [Result<any Sendable, any Error>] {
        var results: [Result<any Sendable, any Error>] = []
        results.reserveCapacity(group.count)
        let database = connection.database
        for job in group {
            if isolated && connection.isBroken {
                results.append(.failure(LedgerStoreError(.unavailable, "the ledger's connection was lost")))
                continue
            }
            var attempt = 1
            while true {
                do {
                    if isolated { try await connection.execute("SAVEPOINT job") }
                    let value = try await Self.$current.withValue((ObjectIdentifier(self), connection)) {
                        try await job.body(database)
                    }
                    if isolated { try await connection.execute("RELEASE SAVEPOINT job") }
                    results.append(.success(value))
                } catch {
                    connection.failed(error)
                    guard isolated else {
                        results.append(.failure(error))
                        return results
                    }
                    try? await connection.execute("ROLLBACK TO SAVEPOINT job")
                    try? await connection.execute("RELEASE SAVEPOINT job")
                    // A deadlock victim (another writer held what this job needed) had no effect,
                    // and the locks it took are released with its savepoint: it runs again.
                    if settings.rerunsGroup(error), attempt < settings.attempts, !connection.isBroken {
                        attempt += 1
                        continue
                    }
                    results.append(.failure(error))
                }
                break
            }
        }
        return results
    }

    /// Hands each job its result on the event loop it was submitted from (``HomeLoop``).
    private static func answer(_ group: [Job], _ results: [Result<any Sendable, any Error>]) {
        HomeLoop.resume(zip(group, results).map { job, result in (job.home, { job.continuation.resume(with: result) }) })
    }
}

/// Rows that the jobs of a group only add, kept aside until the group's commit. Used by the
/// writer's task alone, one job after the other; the lock is never contended.
final class DeferredRows: Sendable {
    private let rows = Mutex<[(table: DeferredTable, values: [LedgerValue])]>([])

    var count: Int { rows.withLock { $0.count } }

    func add(_ table: DeferredTable, _ values: [LedgerValue]) {
        rows.withLock { $0.append((table, values)) }
    }

    func truncate(to count: Int) {
        rows.withLock { $0.removeLast($0.count - count) }
    }

    /// Inserts the rows in the order they were added, table by table, in statements of at most
    /// 64 rows: on PostgreSQL one statement per 64, its list padded to a power of two by repeating
    /// the last row, which it inserts once; elsewhere statements of 64, 32, … 1 rows. Either way
    /// few statement shapes are prepared.
    func insert(on database: any SQLDatabase) async throws {
        let rows = self.rows.withLock { rows in
            defer { rows = [] }
            return rows
        }
        let padded = LedgerSQLDialect(database.dialect) == .postgresql
        var start = 0
        while start < rows.count {
            let table = rows[start].table
            var end = start
            while end < rows.count && rows[end].table == table && end - start < 64 { end += 1 }
            if padded {
                let size = SQLLedgerStore.paddedSize(end - start)
                var values: [LedgerValue] = []
                for index in 0..<size {
                    let ordinal = min(index, end - start - 1)
                    values += rows[start + ordinal].values + [.integer(ordinal)]
                }
                _ = try await database.run(table.paddedInsert(rows: size), values: values)
                start = end
                continue
            }
            var size = 64
            while start < end {
                while size > end - start { size /= 2 }
                _ = try await database.run(table.insert(rows: size), values: rows[start..<start + size].flatMap(\.values))
                start += size
            }
        }
    }
}

/// A table whose rows a group's jobs may leave to the writer: its multi-row inserts.
struct DeferredTable: Hashable, Sendable {
    let name: String
    let columns: [String]
    private let statements: [LedgerStatement]
    private let paddedStatements: [LedgerStatement]

    init(_ name: String, columns: [String]) {
        self.name = name
        self.columns = columns
        let list = columns.joined(separator: ", ")
        let placeholders = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        statements = (0...6).map { power in
            LedgerStatement(
                "INSERT INTO \(name) (\(list)) VALUES "
                    + Array(repeating: placeholders, count: 1 << power).joined(separator: ", "))
        }
        let numbered = "(" + Array(repeating: "?", count: columns.count + 1).joined(separator: ", ") + ")"
        paddedStatements = (0...6).map { power in
            LedgerStatement(
                """
                INSERT INTO \(name) (\(list))
                SELECT DISTINCT ON (ordinal) \(list) FROM (VALUES \(Array(repeating: numbered, count: 1 << power).joined(separator: ", ")))
                AS listed (\(list), ordinal)
                ORDER BY ordinal
                """)
        }
    }

    /// The insert of `rows` rows, a power of two up to 64.
    func insert(rows: Int) -> LedgerStatement {
        statements[rows.trailingZeroBitCount]
    }

    /// The insert of `rows` rows (a power of two up to 64), each followed by its ordinal: rows
    /// listed again with the same ordinal are inserted once, all in the order of their ordinals
    /// (PostgreSQL).
    func paddedInsert(rows: Int) -> LedgerStatement {
        paddedStatements[rows.trailingZeroBitCount]
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

extension Result {
    fileprivate var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
