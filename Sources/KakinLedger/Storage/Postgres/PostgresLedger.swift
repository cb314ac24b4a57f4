import Foundation
public import Logging
import PostgresNIO
import Synchronization

/// The ledger on PostgreSQL, through PostgresNIO's pool of connections (`PostgresClient`), for
/// any number of server replicas sharing one database.
///
/// Every guarantee of ``LedgerStore`` is held by the database: primary and unique keys written
/// with `INSERT … ON CONFLICT DO NOTHING RETURNING`, conditional updates (`… WHERE app_user_id IS
/// NULL`, `… WHERE amount >= $1`), and one database transaction for everything one call changes.
///
/// - **Writes** go through ``PostgresConnectionOptions/writers`` group commits: the writes waiting
///   at the same moment commit in one transaction (one `COMMIT`, one flush), and one customer's
///   writes always go to the same writer. A transaction PostgreSQL ended to break a deadlock
///   (`40P01`) or could not serialize (`40001`) had no effect and runs again, a few times.
/// - **Reads** are single statements on any connection of the pool (a statement sees one state
///   on its own); ``customer(bundleID:appUserID:)`` reads in a `REPEATABLE READ` transaction.
/// - **Bounded waits.** No connection within ``PostgresConnectionOptions/connectionWait``, a lost
///   connection, a statement cancelled by `statement_timeout` (the same wait, on every
///   connection), or a transaction still running a second after that wait (its connection is
///   closed, which ends it) are ``LedgerStoreError/Code/unavailable``: worth retrying later.
///   Every read and write is answered within that wait and a second from its call, even while
///   PostgreSQL's packets are silently dropped: a write that waited for its writer longer than
///   the wait fails without being sent, and a group whose oldest write reaches that bound is
///   ended with its connection.
/// - **A thread of its own.** The connections, the writers and every leased connection's work run
///   on one event loop apart from the server's (``PostgresEventLoop``): a group's round trips do
///   not wait behind the requests the server is handling.
public final class PostgresLedger: LedgerStore {
    /// The pool of the primary, among the configured hosts.
    let primary: PostgresPrimary
    /// The pool in use; tests reach the database through it.
    var client: PostgresClient { primary.client }
    let logger: Logger
    /// How long an operation waits for a connection.
    let connectionWait: Duration
    private let writers: [GroupCommit<PostgresCommitter>]
    /// Uploads looked up by digest, the lookups waiting at the same moment in one statement.
    let lookups: GroupCommit<PostgresLookups>
    private let nextWriter = Atomic<Int>(0)
    /// How many times a transaction that lost a deadlock or failed to serialize runs in all.
    static let attempts = 5

    /// Opens a pool of at most `options.maxConnections` connections: `writers + 2` of them are
    /// opened at once and kept, the others when needed. A database that is down is reported by the
    /// first operation (``migrate()`` at start). Call ``shutdown()`` at the end.
    public init(options: PostgresConnectionOptions, logger: Logger = Logger(label: "kakin.ledger.postgres")) throws {
        let tls = try options.clientTLS()
        // Set at connection start, for every statement of the connection: a statement waiting
        // longer than a connection would (for a lock) is cancelled; writes commit durably; the
        // statements are written for READ COMMITTED whatever the cluster's default.
        var parameters = [
            ("statement_timeout", "\(Self.milliseconds(options.connectionWait))"), ("synchronous_commit", "on"),
            ("default_transaction_isolation", "read committed"),
            // A prepared statement is planned once, not again for each new set of values.
            ("plan_cache_mode", "force_generic_plan"),
        ]
        if let schema = options.schema { parameters.append(("search_path", schema)) }
        primary = PostgresPrimary(endpoints: options.endpoints, logger: logger) { [parameters] endpoint, connections in
            var configuration = PostgresClient.Configuration(
                host: endpoint.host, port: endpoint.port, username: options.username, password: options.password,
                database: options.database, tls: tls)
            configuration.options.maximumConnections = connections ?? options.maxConnections
            // The connections in steady use (the writers', the lookups', a read's) stay open, and no
            // keep-alive query runs: the pool arms no timer each time one of them goes back idle. A
            // connection that stopped answering is closed by the lease's limit instead.
            configuration.options.minimumConnections =
                connections == nil ? min(options.maxConnections - 1, options.writers + 2) : 0
            configuration.options.keepAliveBehavior = nil
            configuration.options.connectTimeout = .seconds(connections == nil ? 10 : 1)
            configuration.options.additionalStartupParameters = parameters
            return PostgresClient(
                configuration: configuration, eventLoopGroup: PostgresEventLoop.shared.group, backgroundLogger: logger)
        }
        self.logger = logger
        connectionWait = options.connectionWait
        let committer = PostgresCommitter(
            primary: primary, wait: options.connectionWait, limit: options.connectionWait + .seconds(1))
        writers = (0..<max(1, options.writers)).map { _ in GroupCommit(committer, executor: PostgresEventLoop.shared) }
        // The lookups' queue starts draining where its first lookup came from, a server's loop,
        // behind the requests queued there: the lookups those requests make join the same
        // statement. (Started on the ledger's own loop, an idle thread, it sent a statement for
        // every few lookups.) Their statements still run on the ledger's loop, in the lease's task.
        lookups = GroupCommit(PostgresLookups(primary: primary, wait: options.connectionWait))
    }

    public func shutdown() async throws {
        for writer in writers { await writer.close() }
        await lookups.close()
        await primary.shutdown()
    }

    public func ping() async throws {
        _ = try await read { try await $0.rows("SELECT 1") }
    }

    // MARK: Schema and locks

    /// Applies the migrations this database has not seen, each in its own transaction, holding an
    /// advisory lock on a connection of its own: replicas starting together migrate one after the
    /// other. Each migration's ID is claimed first (`INSERT … ON CONFLICT DO NOTHING RETURNING`),
    /// and only the transaction that inserted it runs its statements. No statement timeout: an
    /// index on a large table takes what it takes.
    ///
    /// A database that does not answer within the connection wait (still starting, or its
    /// connections all taken for a moment) is asked again, every half second, for up to
    /// ``startupPatience``: a server started beside its database does not stop at once.
    public func migrate() async throws {
        await primary.start()
        let giveUp = ContinuousClock.now + Self.startupPatience
        while true {
            do {
                return try await migrations()
            } catch {
                let error = Self.ledgerError(error)
                guard (error as? LedgerStoreError)?.code == .unavailable, ContinuousClock.now < giveUp else { throw error }
                logger.info("the ledger's database does not answer yet; trying again", metadata: ["error": "\(error)"])
                try await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    /// How long ``migrate()`` keeps asking a database that does not answer.
    static let startupPatience: Duration = .seconds(30)

    private func migrations() async throws {
        let table = LedgerSchema.migrationsTable
        try await lease(limit: nil) { connection in
            do {
                _ = try await connection.rows("SET statement_timeout = 0")
                _ = try await Self.holding(.migrations, on: connection, waiting: true) {
                    _ = try await connection.rows(
                        "CREATE TABLE IF NOT EXISTS \(unescaped: table) (id TEXT PRIMARY KEY)")
                    for migration in LedgerSchema.migrations {
                        try await connection.withTransaction(logger: Self.quiet) { connection in
                            let claimed = try await connection.rows(
                                """
                                INSERT INTO \(unescaped: table) (id) VALUES (\(migration.id))
                                ON CONFLICT (id) DO NOTHING RETURNING id
                                """)
                            guard !claimed.isEmpty else { return }
                            for statement in migration.statements(.postgresql) {
                                _ = try await connection.rows(PostgresQuery(unsafeSQL: statement))
                            }
                        }
                    }
                    try await Self.settlePurchaseMetrics(on: connection)
                    // The prices of rows recorded before the ledger kept them, a page per transaction.
                    while try await connection.withTransaction(logger: Self.quiet, { connection in
                        try await Self.perform(FigureStatements.pricePage(), on: connection)
                    }) {}
                }
                _ = try await connection.rows("RESET statement_timeout")
            } catch {
                // Not back to the pool without its statement timeout.
                try? await connection.close()
                throw error
            }
        }
    }

    /// Runs `body` unless another replica holds `job`'s advisory lock; `nil` when it did not run.
    /// The lock is held on a leased connection until `body` returns, and released with it when
    /// the replica dies.
    public func exclusively<R: Sendable>(
        _ job: ExclusiveJob, _ body: @escaping @Sendable () async throws -> R
    ) async throws -> R? {
        do {
            return try await lease(limit: nil) { connection in
                try await Self.holding(.init(job), on: connection, waiting: false, body)
            }
        } catch { throw Self.ledgerError(error) }
    }

    /// The advisory locks the ledger takes: the first key is Kakin's name and the ledger's
    /// schema (its `search_path`, ``scope``), the second names the use. Servers sharing a ledger take turns; ledgers in
    /// different schemas of one database never wait for each other. A lock belongs to a
    /// connection, so a replica that dies releases its locks.
    enum Lock: Int32 {
        case migrations = 1
        case reconciliation = 2
        /// Held by the transaction of one step of the metrics job (``PostgresLedger/updateMetrics(limit:)``).
        case metrics = 3

        /// The first key of the jobs' locks, as SQL.
        static let scope = "hashtext('kakin ' || current_setting('search_path'))"
        /// The first key of a customer's metrics lock, as SQL (the second is the customer's hash).
        static let customerScope = "hashtext('kakin customers ' || current_setting('search_path'))"

        init(_ job: ExclusiveJob) {
            switch job {
            case .reconciliation: self = .reconciliation
            }
        }
    }

    /// Runs `body` holding `lock` on `connection`; without `waiting`, `nil` at once when another
    /// connection holds it.
    private static func holding<R: Sendable>(
        _ lock: Lock, on connection: PostgresConnection, waiting: Bool, _ body: () async throws -> R
    ) async throws -> R? {
        let (scope, key) = (Lock.scope, lock.rawValue)
        if waiting {
            _ = try await connection.rows("SELECT pg_advisory_lock(\(unescaped: scope), \(key))")
        } else {
            let taken = try await connection.rows("SELECT pg_try_advisory_lock(\(unescaped: scope), \(key))")
            guard try taken.first?.decode(Bool.self) == true else { return nil }
        }
        let result: R
        do { result = try await body() } catch {
            _ = try? await connection.rows("SELECT pg_advisory_unlock(\(unescaped: scope), \(key))")
            throw error
        }
        _ = try await connection.rows("SELECT pg_advisory_unlock(\(unescaped: scope), \(key))")
        return result
    }

    // MARK: Running statements

    /// Runs `job` in a write transaction of the writer of `customer` (an app user ID or an
    /// original transaction ID; writes about no customer in particular go to each in turn).
    func write<R: Sendable>(
        for customer: String? = nil, _ job: @escaping @Sendable (PostgresConnection) async throws -> R
    ) async throws -> R {
        try await submit(for: customer, .run({ connection in try await job(connection) }))
    }

    /// Queues `job` for the writer of `customer` and returns its result once committed.
    func submit<R: Sendable>(for customer: String?, _ job: PostgresWrite) async throws -> R {
        var hasher = Hasher()
        hasher.combine(customer)
        let turn = customer == nil ? nextWriter.add(1, ordering: .relaxed).oldValue : hasher.finalize()
        return try await Self.result(
            of: PostgresCommitter.Job(write: job, queued: .now),
            on: writers[Int(UInt(bitPattern: turn) % UInt(writers.count))])
    }

    /// Queues `job` on `queue` and returns its result once its group ran; errors as the ledger
    /// reports them.
    static func result<R: Sendable, Engine: GroupCommitEngine>(
        of job: Engine.Job, on queue: GroupCommit<Engine>
    ) async throws -> R {
        do {
            guard let result = try await queue.submit(job) as? R else {
                throw LedgerStoreError(.inconsistentState, "a job of the group commit returned an unexpected type")
            }
            return result
        } catch {
            throw Self.ledgerError(error)
        }
    }

    /// The rows of one statement run as a write of `customer`'s writer.
    @discardableResult
    func written(for customer: String? = nil, _ query: PostgresQuery) async throws -> [PostgresRow] {
        try await write(for: customer) { try await $0.rows(query) }
    }

    /// Runs `body`, which reads with single statements, on a leased connection.
    func read<R: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        do { return try await lease(limit: connectionWait + .seconds(1), body) } catch { throw Self.ledgerError(error) }
    }

    /// Runs `body` on a leased connection. No connection within ``connectionWait`` is
    /// ``LedgerStoreError/Code/unavailable``; with a `limit`, so is a `body` still running that
    /// long after this call: its connection is closed (a statement sent on a connection the
    /// server dropped may never be answered), which fails what runs on it.
    func lease<R: Sendable>(
        limit: Duration?, _ body: @escaping @Sendable (PostgresConnection) async throws -> R
    ) async throws -> R {
        let (client, waiters) = try primary.pool()
        return try await Self.lease(
            client: client, waiters: waiters, wait: connectionWait, limit: limit, deadline: limit.map { .now + $0 }, body)
    }

    /// Runs `body` on a connection of `client`: no connection within `wait` (nor by `deadline`) is
    /// ``LedgerStoreError/Code/unavailable``, and so is a `body` still running `limit` after its
    /// lease or at `deadline`, whichever comes first; its connection is closed then.
    ///
    /// A statement sent on a connection the server dropped may never be answered, and closing the
    /// connection may not end it: the caller is answered when a limit passes whether or not `body`
    /// has ended, and a `body` that never ends is left behind with its closed connection.
    ///
    /// Until it ends, `waiters` can fail it at once (the pool's host is gone): while it waits for a
    /// connection, or, when the host is known to be no longer the primary, on its connection.
    ///
    /// `body` runs on the connections' own event loop (``PostgresEventLoop``).
    static func lease<R: Sendable>(
        client: PostgresClient, waiters: PostgresWaiters? = nil, wait: Duration, limit: Duration?,
        deadline: ContinuousClock.Instant? = nil, _ body: @escaping @Sendable (PostgresConnection) async throws -> R
    ) async throws -> R {
        let wait = deadline.map { min(wait, $0 - .now) } ?? wait
        let lease = Lease<R>()
        return try await withCheckedThrowingContinuation { continuation in
            lease.start(continuation)
            let waiting = waiters?.add { reason, leased in lease.abandon(LedgerStoreError(.unavailable, reason), leased: leased) }
            let work = Task(executorPreference: PostgresEventLoop.shared) {
                defer { if let waiting { waiters?.remove(waiting) } }
                do {
                    let result = try await client.withConnection { connection in
                        lease.leased(connection)
                        return try await body(connection)
                    }
                    lease.finish(.success(result))
                } catch {
                    let leased = lease.connection != nil
                    lease.finish(
                        .failure(leased ? error : LedgerStoreError(.unavailable, "PostgreSQL cannot be reached: \(error)")))
                }
            }
            lease.work = work
            // Timers on the connections' event loop: cheaper than a sleeping task each.
            let loop = PostgresEventLoop.shared.loop
            lease.timer = loop.scheduleTask(in: timeAmount(wait)) {
                guard let (connection, since) = lease.connection else {
                    work.cancel()
                    return lease.finish(
                        .failure(LedgerStoreError(.unavailable, "no PostgreSQL connection within \(wait): unreachable or busy")))
                }
                guard let limit else { return }
                let end = deadline.map { min(since + limit, $0) } ?? since + limit
                lease.timer = loop.scheduleTask(in: timeAmount(end - .now)) {
                    lease.finish(
                        .failure(
                            LedgerStoreError(.unavailable, "PostgreSQL did not answer within \(end - since); the connection was closed")))
                    _ = connection.close() as EventLoopFuture<Void>
                }
            }
        }
    }

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(max(0, duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000))
    }

    // MARK: Errors

    /// The SQLSTATE of a statement PostgreSQL refused, seen through a transaction's error.
    static func sqlState(_ error: any Error) -> String? {
        if let error = error as? PSQLError { return error.serverInfo?[.sqlState] }
        guard let error = error as? PostgresTransactionError else { return nil }
        return (error.closureError ?? error.beginError ?? error.commitError).flatMap(sqlState)
    }

    /// Whether PostgreSQL ended the transaction to break a deadlock (`40P01`) or because it could
    /// not be serialized (`40001`): it had no effect, and may run again.
    static func isConflict(_ error: any Error) -> Bool {
        ["40P01", "40001"].contains(sqlState(error))
    }

    /// The ledger's error for a failure: a connection that could not be had or was lost, a server
    /// shutting down, too many connections, a cancelled statement, a conflict or a write sent to a
    /// standby are
    /// ``LedgerStoreError/Code/unavailable``; any other refusal is a state the ledger does not
    /// expect. Other errors (the ledger's own, a job's) pass unchanged.
    static func ledgerError(_ error: any Error) -> any Error {
        if let error = error as? PostgresTransactionError {
            return (error.closureError ?? error.beginError ?? error.commitError).map(ledgerError) ?? error
        }
        guard let error = error as? PSQLError else { return error }
        guard let info = error.serverInfo else {
            return LedgerStoreError(.unavailable, "PostgreSQL cannot be reached: \(String(reflecting: error))")
        }
        let state = info[.sqlState] ?? ""
        if state == "53100" { return LedgerStoreError(.diskFull, "PostgreSQL 53100: \(info[.message] ?? "disk full")") }
        // 25006: a write reached a standby (the primary moved; the next operation goes to the new one).
        let transient = ["08", "40", "53", "57"].contains(String(state.prefix(2))) || state == "25006"
        return LedgerStoreError(
            transient ? .unavailable : .inconsistentState, "PostgreSQL \(state): \(info[.message] ?? "")")
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// PostgresNIO logs each statement at debug level; the ledger's statements are not logged.
    static let quiet = Logger(label: "kakin.ledger.postgres.statements", factory: { _ in SwiftLogNoOpLogHandler() })
}

/// One lease: the connection it got and since when, the caller waiting for its result (answered
/// once), and the timer that bounds it.
private final class Lease<R: Sendable>: Sendable {
    private struct State {
        var connection: (PostgresConnection, ContinuousClock.Instant)?
        var waiting: CheckedContinuation<R, any Error>?
        var timer: Scheduled<Void>?
        var work: Task<Void, Never>?
        var finished = false
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<R, any Error>) { state.withLock { $0.waiting = continuation } }

    func leased(_ connection: PostgresConnection) { state.withLock { $0.connection = (connection, .now) } }

    var connection: (PostgresConnection, ContinuousClock.Instant)? { state.withLock { $0.connection } }

    var timer: Scheduled<Void>? {
        get { state.withLock { $0.timer } }
        set {
            let finished = state.withLock { state in
                state.timer = newValue
                return state.finished
            }
            if finished { newValue?.cancel() }
        }
    }

    /// The task that asks for the connection and runs the body.
    var work: Task<Void, Never>? {
        get { state.withLock { $0.work } }
        set { state.withLock { $0.work = newValue } }
    }

    /// Fails a lease still waiting for a connection and stops its task; with `leased`, also one
    /// that has its connection, which is closed.
    func abandon(_ error: any Error, leased: Bool) {
        let connection = connection
        guard connection == nil || leased else { return }
        finish(.failure(error))
        work?.cancel()
        if let (connection, _) = connection { _ = connection.close() as EventLoopFuture<Void> }
    }

    /// Answers the caller, the first time only, and stops the timer.
    func finish(_ result: Result<R, any Error>) {
        let (waiting, timer) = state.withLock { state in
            defer {
                state.waiting = nil
                state.finished = true
            }
            return (state.waiting, state.timer)
        }
        timer?.cancel()
        waiting?.resume(with: result)
    }
}

/// A write a PostgreSQL writer commits.
typealias PostgresWrite = LedgerWrite<@Sendable (PostgresConnection) async throws -> any Sendable>

extension LedgerWrite where Job == @Sendable (PostgresConnection) async throws -> any Sendable {
    /// Runs `writes` in order on `connection`, each run of consecutive ingests together
    /// (``PostgresLedger/ingest(_:on:)``).
    static func run(_ writes: [Self], on connection: PostgresConnection) async throws -> [any Sendable] {
        var results: [any Sendable] = []
        for step in steps(writes) {
            switch step {
            case .ingests(let changes): results += try await PostgresLedger.ingest(changes, on: connection) as [any Sendable]
            case .job(let job): results.append(try await job(connection))
            }
        }
        return results
    }
}

/// Commits a writer's groups: one transaction on a leased connection, and, when the group runs
/// isolated, a savepoint per job.
///
/// Every write is answered within `limit` of being queued, whatever holds its writer: a write that
/// has waited in the queue longer than `wait` fails as ``LedgerStoreError/Code/unavailable``
/// without being sent, and a group is given until its oldest write's `limit` passes (its
/// connection is closed then, and its writes fail the same way). The writes queued behind a group
/// that stopped getting answers fail at once when it ends, instead of each waiting again.
struct PostgresCommitter: GroupCommitEngine {
    /// A write and when it was queued.
    struct Job: Sendable {
        var write: PostgresWrite
        var queued: ContinuousClock.Instant
    }

    let primary: PostgresPrimary
    let wait: Duration
    let limit: Duration

    func commit(_ jobs: [Job], isolated: Bool) async throws -> [Result<any Sendable, any Error>] {
        let now = ContinuousClock.now
        guard jobs.contains(where: { now - $0.queued > wait }) else { return try await sending(jobs, isolated: isolated) }
        let live = jobs.filter { now - $0.queued <= wait }
        var results = (live.isEmpty ? [] : try await sending(live, isolated: isolated)).makeIterator()
        let late = LedgerStoreError(.unavailable, "waited over \(wait) for a PostgreSQL writer: unreachable or busy")
        return jobs.map { now - $0.queued <= wait ? results.next() ?? .failure(late) : .failure(late) }
    }

    /// Commits `jobs`, none of which has waited longer than ``wait``, by the oldest one's limit.
    private func sending(_ jobs: [Job], isolated: Bool) async throws -> [Result<any Sendable, any Error>] {
        let deadline = (jobs.lazy.map(\.queued).min() ?? .now) + limit
        let writes = jobs.map(\.write)
        var attempt = 1
        while true {
            do {
                let (client, waiters) = try primary.pool()
                return try await PostgresLedger.lease(
                    client: client, waiters: waiters, wait: wait, limit: limit, deadline: deadline
                ) { connection in
                    try await connection.withTransaction(logger: PostgresLedger.quiet) { connection in
                        guard isolated else {
                            return try await PostgresWrite.run(writes, on: connection).map { .success($0) }
                        }
                        var results: [Result<any Sendable, any Error>] = []
                        for job in writes {
                            _ = try await connection.rows("SAVEPOINT job")
                            do {
                                results.append(.success(try await PostgresWrite.run([job], on: connection)[0]))
                                _ = try await connection.rows("RELEASE SAVEPOINT job")
                            } catch  where !PostgresLedger.isConflict(error) && Self.leavesConnectionUsable(error) {
                                _ = try await connection.rows("ROLLBACK TO SAVEPOINT job")
                                results.append(.failure(error))
                            }
                        }
                        return results
                    }
                }
            } catch  where attempt < PostgresLedger.attempts && PostgresLedger.isConflict(error) {
                attempt += 1
            }
        }
    }

    /// Whether the connection can go on after `error`: an error of the job's own, or a statement
    /// PostgreSQL refused; not a connection that failed.
    private static func leavesConnectionUsable(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return true }
        return error.serverInfo != nil
    }
}

extension PostgresConnection {
    /// The rows of `query`, all read.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await self.query(query, logger: PostgresLedger.quiet).collect()
    }

    /// The rows of a prepared statement (prepared on this connection the first time).
    func rows<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [PostgresRow]
    where Statement.Row == PostgresRow {
        var rows: [PostgresRow] = []
        for try await row in try await execute(statement, logger: PostgresLedger.quiet) { rows.append(row) }
        return rows
    }
}

extension PostgresRow {
    /// The value of `column`.
    func get<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        try makeRandomAccess()[column].decode(T.self)
    }
}

/// The leases of a pool not yet ended, which the ledger fails at once when the pool's host turns
/// out to be gone (those still waiting for a connection) or no longer the primary (all of them)
/// (``PostgresPrimary``).
final class PostgresWaiters: Sendable {
    private struct State {
        var next = 0
        var abandons: [Int: @Sendable (String, Bool) -> Void] = [:]
    }

    private let state = Mutex(State())

    /// Registers a lease; `abandon` fails it with a reason (and, when told, also once it has its
    /// connection).
    func add(_ abandon: @escaping @Sendable (_ reason: String, _ leased: Bool) -> Void) -> Int {
        state.withLock { state in
            state.next += 1
            state.abandons[state.next] = abandon
            return state.next
        }
    }

    func remove(_ id: Int) {
        _ = state.withLock { $0.abandons.removeValue(forKey: id) }
    }

    /// Fails every lease waiting for a connection now, and with `leased` every other one too.
    func abandonAll(_ reason: String, leased: Bool) {
        let abandons = state.withLock { $0.abandons }
        for abandon in abandons.values { abandon(reason, leased) }
    }
}
