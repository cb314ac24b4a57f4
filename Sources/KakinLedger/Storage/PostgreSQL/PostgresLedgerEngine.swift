import Crypto
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import PostgresNIO
import SQLKit
import Synchronization

/// The PostgreSQL side of the ledger: a pool of connections, and on it the same write path as
/// SQLite's (a ``GroupCommitWriter``).
///
/// - **Writes** queue for one of this process's writers (``PostgresConnectionOptions/writers``;
///   one customer's writes always for the same one), which leases one connection while there are
///   jobs and commits each group in one transaction: one commit (one WAL flush, with
///   `synchronous_commit = on`) and one `BEGIN`/`COMMIT` pair for the group, instead of for each
///   request. A writer waits for PostgreSQL at each statement, so a few of them keep the database
///   busy where one would leave it idle between round trips. Replicas each have their own
///   writers; the database's keys and row locks keep them correct together.
/// - **Reads** run on the pool's other connections. The digest lookups and summaries that
///   requests ask for at the same moment are read together, one statement for a batch
///   (``BatchedRead``), and a group's new purchases are recorded together
///   (``SQLLedgerStore/recordBatch(_:on:)``).
/// - **Prepared statements.** The ledger's statements (``LedgerStatement``) are prepared once per
///   connection, with the type of each value, and then run with one round trip and no planning.
/// - **Bounded waits.** A lease that does not come within ``PostgresConnectionOptions/connectionWait``,
///   a group still running after that long (its connection is closed, which ends the transaction
///   unacknowledged), and a statement PostgreSQL cancels at `statement_timeout` (set to the same
///   wait on every connection) all end as ``LedgerStoreError/Code/unavailable``: a request never
///   waits without end for a database that is gone.
final class PostgresLedgerEngine: Sendable {
    let client: PostgresClient
    let database: PostgresClientDatabase
    /// The writers: each leases one connection while it has groups to commit.
    let writers: [GroupCommitWriter]
    /// The digest lookups of uploads, read together (``BatchedRead``), one batch at a time: while
    /// it runs, the next one gathers, so the busier the server, the larger its batches.
    let digestReads: BatchedRead<Data, KnownSignedTransaction>
    /// The digest lookups of uploads that are answered with the owner's summary, each with that
    /// summary, read together: one statement for finding a duplicate and answering it.
    let duplicateReads: BatchedRead<Data, SQLLedgerStore.KnownDuplicate>
    /// The customer summaries of answers (without recent transactions), read together.
    let summaryReads: BatchedRead<SQLLedgerStore.SummaryKey, CustomerSummary>
    /// Where writes about no customer in particular go next.
    private let nextWriter = Atomic<Int>(0)
    private let running: Task<Void, Never>
    /// How many times a transaction chosen as a deadlock victim (or failing to serialize) runs
    /// again before its error is reported.
    static let attempts = 5

    init(options: PostgresConnectionOptions, logger: Logger) throws(LedgerStoreError) {
        var configuration = PostgresClient.Configuration(
            host: options.host, port: options.port, username: options.username, password: options.password,
            database: options.database, tls: try options.clientTLS())
        configuration.options.maximumConnections = options.maxConnections
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = .seconds(10)
        let wait = options.connectionWait.components
        let waitMilliseconds = wait.seconds * 1000 + wait.attoseconds / 1_000_000_000_000_000
        // `plan_cache_mode`: a prepared statement is planned once, for any values. Left to choose,
        // PostgreSQL keeps planning again at every run a statement whose plan for the given values
        // it estimates cheaper, as it does for a batch's list of keys: a millisecond of planning
        // for a statement that runs in a fraction of that. The ledger's statements all find their
        // rows by key, where the plan does not depend on the values.
        // `default_transaction_isolation`: a writer's batch of new purchases runs as a statement
        // outside any transaction of its own, which then runs at the cluster's default level;
        // read committed is the level its `ON CONFLICT` clauses are written for, whatever the
        // cluster's default.
        var parameters = [
            ("statement_timeout", "\(waitMilliseconds)"), ("synchronous_commit", "on"),
            ("plan_cache_mode", "force_generic_plan"), ("default_transaction_isolation", "read committed"),
        ]
        if let schema = options.schema { parameters.append(("search_path", schema)) }
        configuration.options.additionalStartupParameters = parameters
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        let database = PostgresClientDatabase(client: client, logger: logger, connectionWait: options.connectionWait)
        self.database = database
        writers = (0..<options.writers).map { _ in
            GroupCommitWriter(
                .init(
                    begin: LedgerSQLDialect.postgresql.beginWrite,
                    closedError: { LedgerStoreError(.unavailable, "the PostgreSQL store was shut down") },
                    rerunsGroup: Self.isConflict, attempts: Self.attempts,
                    mapError: { error in (error as? PSQLError).map(Self.ledgerError) ?? error },
                    batch: { items, db in try await SQLLedgerStore.recordBatch(items, on: db) },
                    groupLimit: options.connectionWait + .seconds(1))
            ) { body in
                try await database.leasing { connection in
                    try await body(PostgresWriterConnection(connection: connection, database: database.session(connection)))
                }
            }
        }
        digestReads = BatchedRead(lanes: 1, maxBatch: SQLLedgerStore.batchLimit) { digests in
            try await SQLLedgerStore.signedTransactions(digests, on: database)
        }
        duplicateReads = BatchedRead(lanes: 1, maxBatch: SQLLedgerStore.batchLimit) { digests in
            try await SQLLedgerStore.knownDuplicates(digests, on: database)
        }
        summaryReads = BatchedRead(lanes: 1, maxBatch: SQLLedgerStore.batchLimit) { keys in
            try await SQLLedgerStore.summaries(keys, on: database)
        }
        // Started at once, so the pool runs before the first lease asks for a connection.
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            self.running = Task.immediate { await client.run() }
        } else {
            self.running = Task { await client.run() }
        }
    }

    /// The writer of `customer`'s writes (one customer's writes always go to the same one, so that
    /// two writers never wait for each other's locks on a customer's rows); the next in turn for
    /// writes about no customer.
    func writer(for customer: String?) -> GroupCommitWriter {
        guard writers.count > 1 else { return writers[0] }
        guard let customer else {
            return writers[nextWriter.wrappingAdd(1, ordering: .relaxed).oldValue % writers.count]
        }
        var hasher = Hasher()
        hasher.combine(customer)
        return writers[Int(UInt(bitPattern: hasher.finalize()) % UInt(writers.count))]
    }

    /// Runs `body` in one transaction on one connection of the pool (reads, migrations). A
    /// transaction PostgreSQL aborted to break a deadlock, or that could not be serialized, had no
    /// effect and runs again; other failures become ``LedgerStoreError``s.
    func transaction<R: Sendable>(
        begin: String, _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        var attempt = 1
        while true {
            do {
                return try await database.leasedSession { session in
                    try await SQLLedgerStore.transaction(on: session, begin: begin, body)
                }
            } catch let error as PSQLError {
                let ledgerError = Self.ledgerError(error)
                if attempt < Self.attempts, Self.isConflict(ledgerError) {
                    attempt += 1
                    continue
                }
                throw ledgerError
            } catch let error as LedgerStoreError where attempt < Self.attempts && Self.isConflict(error) {
                attempt += 1
            }
        }
    }

    /// Whether `error` is PostgreSQL ending a transaction to break a deadlock (`40P01`) or because
    /// it could not be serialized (`40001`): it had no effect, and runs again.
    @Sendable static func isConflict(_ error: any Error) -> Bool {
        guard let error = error as? LedgerStoreError, error.code == .unavailable else { return false }
        return error.message.hasPrefix("PostgreSQL 40P01") || error.message.hasPrefix("PostgreSQL 40001")
    }

    /// Whether `error` says the connection itself is gone (it never reached PostgreSQL, or the
    /// server is shutting down or closed it): nothing more can be sent on that connection.
    static func isConnectionFailure(_ error: any Error) -> Bool {
        if let error = error as? PSQLError { return error.serverInfo == nil }
        guard let error = error as? LedgerStoreError else { return false }
        return error.message.hasPrefix("PostgreSQL cannot be reached") || error.message.hasPrefix("PostgreSQL 57P")
            || error.message.hasPrefix("PostgreSQL 08") || error.message.hasPrefix("the PostgreSQL connection was closed")
            || error.message.hasPrefix("the database did not finish")
    }

    /// The ledger's error for a PostgreSQL failure: no connection, a server shutting down, too
    /// many connections, a cancelled statement or a conflict that outlived its retries are
    /// unavailable (worth retrying later); anything else is a state the ledger does not expect.
    static func ledgerError(_ error: PSQLError) -> LedgerStoreError {
        guard let info = error.serverInfo else {
            return LedgerStoreError(.unavailable, "PostgreSQL cannot be reached: \(String(reflecting: error))")
        }
        let state = info[.sqlState] ?? ""
        let message = "PostgreSQL \(state): \(info[.message] ?? "")"
        let transient = ["08", "40", "53", "57"].contains(String(state.prefix(2)))
        return LedgerStoreError(transient ? .unavailable : .inconsistentState, message)
    }

    /// Lets the writer finish what it has, then closes the pool: connections in use finish their
    /// work first.
    func close() async {
        for writer in writers { await writer.close() }
        running.cancel()
        await running.value
    }
}

/// The writer's hold on one leased connection, for as long as it has groups to commit. A group
/// that runs longer than the writer's limit, or a statement that fails because the connection is
/// gone, gives the connection up (``failed(_:)``): it is closed, and the writer leases another.
private final class PostgresWriterConnection: GroupCommitConnection {
    let connection: PostgresConnection
    let database: any SQLDatabase
    let logger: Logger

    init(connection: PostgresConnection, database: PostgresSessionDatabase) {
        self.connection = connection
        self.database = database
        self.logger = database.logger
    }

    /// Set once a statement failed because the connection itself is gone.
    private let broken = Atomic<Bool>(false)

    var isBroken: Bool { broken.load(ordering: .relaxed) || connection.isClosed }

    var executor: (any TaskExecutor)? { EventLoopTaskExecutor.of(connection.eventLoop) }

    /// After a connection-level failure nothing more is sent on the connection (PostgresNIO may
    /// never answer a statement sent on a connection the server has just closed): it is closed,
    /// and the writer leases another.
    func failed(_ error: any Error) {
        guard PostgresLedgerEngine.isConnectionFailure(error) else { return }
        logger.warning("giving up a PostgreSQL connection", metadata: ["error": "\(error)"])
        broken.store(true, ordering: .relaxed)
        let connection = self.connection
        Task { try? await connection.close() }
    }

    func execute(_ sql: String) async throws {
        guard !isBroken else { throw LedgerStoreError(.unavailable, "the PostgreSQL connection was closed") }
        do {
            _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        } catch let error as PSQLError {
            let error = PostgresLedgerEngine.ledgerError(error)
            failed(error)
            throw error
        }
    }

}

/// A ``LedgerStatement`` run as a PostgreSQL prepared statement.
///
/// PostgresNIO prepares a statement once per connection (by name, the first time a connection runs
/// it) and runs it afterwards with one round trip and no planning; its API describes a statement by
/// the type's static `name`, `sql` and value types. The ledger's statements are values, so the type
/// reads them from ``current``, which ``run(_:_:on:logger:)`` sets around each run.
struct LedgerPreparedStatement: PostgresPreparedStatement {
    typealias Row = PostgresRow

    /// What PostgreSQL knows a statement by.
    struct Described: Sendable {
        let name: String
        let sql: String
        let types: [PostgresDataType]
    }

    @TaskLocal static var current: Described?
    static var name: String { current?.name ?? "" }
    static var sql: String { current?.sql ?? "" }
    static var bindingDataTypes: [PostgresDataType] { current?.types ?? [] }

    let values: [LedgerValue]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .text(let text?): bindings.append(text)
            case .integer(let number?): bindings.append(number)
            case .blob(let data?): bindings.append(ByteBuffer(bytes: data))
            case .text(nil), .integer(nil), .blob(nil): bindings.appendNull()
            }
        }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }

    /// The statements described so far, by text and value types.
    private static let described = Mutex<[String: Described]>([:])

    /// Runs `statement` with `values` on `connection`, prepared there the first time.
    static func run(
        _ statement: LedgerStatement, _ values: [LedgerValue], on connection: PostgresConnection, logger: Logger
    ) async throws -> [PostgresRow] {
        let description = describe(statement, values)
        return try await $current.withValue(description) {
            var rows: [PostgresRow] = []
            for try await row in try await connection.execute(Self(values: values), logger: logger) {
                rows.append(row)
            }
            return rows
        }
    }

    private static func describe(_ statement: LedgerStatement, _ values: [LedgerValue]) -> Described {
        var key = statement.text
        key.append("\u{0}")
        for value in values { key.append(value.postgresTypeLetter) }
        if let known = described.withLock({ $0[key] }) { return known }
        var sql = ""
        for (index, part) in statement.parts.enumerated() {
            sql += part
            if index < values.count { sql += "$\(index + 1)" }
        }
        let name = "kakin_" + SHA256.hash(data: Data(key.utf8)).prefix(12).hexDigits
        let made = Described(name: name, sql: sql, types: values.map(\.postgresType))
        described.withLock { $0[key] = made }
        return made
    }
}

extension LedgerValue {
    /// The PostgreSQL type a statement declares for the value.
    fileprivate var postgresType: PostgresDataType {
        switch self {
        case .text: .text
        case .integer: .int8
        case .blob: .bytea
        }
    }

    fileprivate var postgresTypeLetter: Character {
        switch self {
        case .text: "t"
        case .integer: "i"
        case .blob: "b"
        }
    }
}

/// One connection seen through SQLKit, with the ledger's statements prepared on it.
struct PostgresSessionDatabase: SQLDatabase {
    let connection: PostgresConnection
    let inner: any SQLDatabase
    var eventLoop: any EventLoop { connection.eventLoop }
    var logger: Logger { inner.logger }
    var dialect: any SQLDialect { inner.dialect }
    var queryLogLevel: Logger.Level? { nil }

    func execute(
        sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void
    ) -> EventLoopFuture<Void> {
        inner.execute(sql: query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        do {
            try await inner.execute(sql: query, onRow)
        } catch let error as PSQLError {
            throw PostgresLedgerEngine.ledgerError(error)
        }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await closure(self)
    }

    /// Runs a ledger statement, prepared on this connection, and returns its rows.
    func run(_ statement: LedgerStatement, _ values: [LedgerValue]) async throws -> [any SQLRow] {
        do {
            return try await LedgerPreparedStatement.run(statement, values, on: connection, logger: logger).map {
                LedgerPostgresRow($0)
            }
        } catch let error as PSQLError {
            throw PostgresLedgerEngine.ledgerError(error)
        }
    }
}

/// A row of a ledger statement seen through SQLKit. The values the ledger reads (text, whole
/// numbers, bytes, and these or `NULL`) are decoded by PostgresNIO's own decoders for their
/// types; anything else goes through PostgresKit's translation, which handles any `Decodable`
/// by way of a decoder and is several times slower for these.
struct LedgerPostgresRow: SQLRow {
    let row: PostgresRandomAccessRow
    let original: PostgresRow

    init(_ row: PostgresRow) {
        self.row = row.makeRandomAccess()
        self.original = row
    }

    private var general: any SQLRow { original.sql() }

    var allColumns: [String] { row.map(\.columnName) }

    func contains(column: String) -> Bool { row.contains(column) }

    func decodeNil(column: String) throws -> Bool {
        !row.contains(column) || row[column].bytes == nil
    }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard row.contains(column) else { return try general.decode(column: column, as: D.self) }
        let cell = row[column]
        let decoded: Any
        switch type {
        case is String.Type: decoded = try cell.decode(String.self)
        case is Int64.Type: decoded = try cell.decode(Int64.self)
        case is Int.Type: decoded = try cell.decode(Int.self)
        case is Data.Type: decoded = try cell.decode(Data.self)
        case is String?.Type: decoded = try cell.decode(String?.self) as Any
        case is Int64?.Type: decoded = try cell.decode(Int64?.self) as Any
        case is Int?.Type: decoded = try cell.decode(Int?.self) as Any
        default: return try general.decode(column: column, as: D.self)
        }
        guard let value = decoded as? D else { return try general.decode(column: column, as: D.self) }
        return value
    }
}

/// Whether a connection was leased, shared by a lease and its time limit.
private final class LeaseFlag: Sendable {
    let state = Mutex(false)
}

/// A SQLKit database over a PostgresNIO client: each statement runs on a connection leased for
/// it, and each ``withSession(_:)`` closure keeps one leased connection throughout, so a
/// transaction's statements never mix with another's.
struct PostgresClientDatabase: SQLDatabase {
    let client: PostgresClient
    let logger: Logger
    /// How long a statement or a session waits for a connection of the pool.
    let connectionWait: Duration

    var eventLoop: any EventLoop { PostgresClient.defaultEventLoopGroup.any() }
    var dialect: any SQLDialect { PostgresDialect() }

    func execute(
        sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void
    ) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await leasing { connection in try await session(connection).execute(sql: query, onRow) }
    }

    /// SQLKit's requirement itself (no `Sendable` bound on `R`), so that a session reached through
    /// `any SQLDatabase` (migrations, the exclusive jobs' locks) keeps one connection too, instead
    /// of SQLKit's default of the whole pool. It waits for a connection as long as the pool takes;
    /// requests go through ``leasedSession(_:)``, which waits no longer than ``connectionWait``.
    /// `@concurrent`, as SQLKit declares it: without it, in this module's language mode, the
    /// method would be an overload and not the requirement.
    @concurrent func withSession<R>(
        _ closure: @escaping @Sendable @concurrent (any SQLDatabase) async throws -> R
    ) async throws -> R {
        try await client.withConnection { connection in try await closure(session(connection)) }
    }

    /// A session on one connection, leased within ``connectionWait``.
    func leasedSession<R: Sendable>(
        _ closure: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        try await leasing { connection in try await closure(session(connection)) }
    }

    /// Runs one ledger statement on a leased connection, outside any transaction, and gives up on
    /// it (closing its connection) when no answer came within the connection wait and a second: the
    /// server's `statement_timeout` ends any statement before that.
    func run(_ statement: LedgerStatement, _ values: [LedgerValue]) async throws -> [any SQLRow] {
        let limit = connectionWait + .seconds(1)
        return try await leasing { connection in
            let session = session(connection)
            let outcome = await Deadline.run(
                limit, executor: EventLoopTaskExecutor.of(connection.eventLoop)
            ) { () async -> Result<[any SQLRow], any Error> in
                do { return .success(try await session.run(statement, values)) } catch { return .failure(error) }
            }
            guard let outcome else {
                try? await connection.close()
                throw LedgerStoreError(.unavailable, "PostgreSQL did not answer within \(limit); its connection was given up")
            }
            return try outcome.get()
        }
    }

    /// `connection` seen through SQLKit.
    func session(_ connection: PostgresConnection) -> PostgresSessionDatabase {
        PostgresSessionDatabase(connection: connection, inner: connection.sql(queryLogLevel: nil, logger: logger))
    }

    /// Runs `body` on a leased connection. When no connection comes within ``connectionWait``
    /// (the pool is busy, or the database is down or refuses connections), or the pool gives up,
    /// that is ``LedgerStoreError/Code/unavailable``; once `body` runs it is never cut short.
    func leasing<R: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> R
    ) async throws -> R {
        let leased = LeaseFlag()
        let (client, wait) = (self.client, connectionWait)
        do {
            return try await withThrowingTaskGroup(of: R?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        leased.state.withLock { $0 = true }
                        // On the connection's own event loop: each statement's answer resumes the
                        // task where it arrived, instead of waking another thread for it.
                        return try await withTaskExecutorPreference(EventLoopTaskExecutor.of(connection.eventLoop)) {
                            try await body(connection)
                        }
                    }
                }
                group.addTask {
                    try? await Task.sleep(for: wait)
                    guard leased.state.withLock({ $0 }) || Task.isCancelled else {
                        throw LedgerStoreError(
                            .unavailable, "no PostgreSQL connection within \(wait): the database is unreachable or busy")
                    }
                    return nil
                }
                while let next = try await group.next() {
                    guard let result = next else { continue }
                    group.cancelAll()
                    return result
                }
                throw LedgerStoreError(.inconsistentState, "a PostgreSQL lease ended without a result")
            }
        } catch let error as PSQLError {
            throw PostgresLedgerEngine.ledgerError(error)
        } catch where !leased.state.withLock({ $0 }) {
            if let error = error as? LedgerStoreError { throw error }
            throw LedgerStoreError(.unavailable, "PostgreSQL cannot be reached: \(error)")
        }
    }
}

/// An event loop as a task executor: tasks that prefer it run their jobs on the loop's thread.
final class EventLoopTaskExecutor: TaskExecutor, Sendable {
    let loop: any EventLoop

    private init(loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    private static let executors = Mutex<[ObjectIdentifier: EventLoopTaskExecutor]>([:])

    /// The executor of `loop`, one per loop.
    static func of(_ loop: any EventLoop) -> EventLoopTaskExecutor {
        executors.withLock { executors in
            if let known = executors[ObjectIdentifier(loop)] { return known }
            let made = EventLoopTaskExecutor(loop: loop)
            executors[ObjectIdentifier(loop)] = made
            return made
        }
    }
}
