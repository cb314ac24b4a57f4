import Foundation
import Logging
public import SQLKit
import SQLiteKit

/// The ledger in a SQL database: SQLite embedded by default, PostgreSQL for several replicas.
///
/// Every guarantee of ``LedgerStore`` is held by the database, not by this process:
/// - one row per transaction, notification, idempotency key, balance and delivery: primary and
///   unique keys, written with `INSERT … ON CONFLICT DO NOTHING` and checked with `RETURNING`;
/// - an owner is filled in once: `UPDATE … WHERE app_user_id IS NULL`;
/// - a transaction is revoked once: `UPDATE … WHERE revocation_date IS NULL`;
/// - a spend never takes a balance below zero: `UPDATE … WHERE amount >= ?`;
/// - everything one call changes (rows, ledger lines, balances, outbox events) commits together
///   in one database transaction, or not at all.
///
/// So any number of stores, in one process or many, can share a database.
///
/// The `database` must give each `SQLDatabase.withSession(_:)` closure a connection of its own
/// (the SQLite store made by ``sqlite(path:connections:busyTimeout:)`` has its own engine, and so do SQLKit's pooled
/// PostgreSQL databases): a transaction's statements must not mix with another's.
///
/// ## Outbox events
///
/// Each change appends a row to `events` in the same transaction. The payload is a JSON object
/// with sorted keys and camel-case names; instants are milliseconds since 1970 (UTC):
/// - `transaction.recorded`: a transaction was recorded for the first time, or its owner became
///   known. `transactionId`, `originalTransactionId`, `productId`, `productType`, `quantity`,
///   `environment`, `source`, `ownerAssigned` (true when the owner was learned now), `revoked`.
/// - `transaction.revoked`: `transactionId`, `originalTransactionId`, `productId`,
///   `revocationDate`, `revocationReason` (when known).
/// - `balance.credited`, `balance.spent`, `balance.clawed_back`: `currency`, `amount` (signed, as
///   in the ledger), `balance` (after the change), `idempotencyKey`, `transactionId` (credits and
///   clawbacks), `shortfall` (clawbacks).
///
/// The event's `bundleID` and `appUserID` are the customer's; `appUserID` is absent for
/// transactions whose owner is not known yet.
///
/// ## Choices the protocol leaves open
/// - ``revoke(transactionID:at:reason:grants:policy:)`` takes back exactly what the ledger credited
///   for the transaction (its `credit` lines), whatever `grants` says today; `grants` is not used.
/// - ``spend(bundleID:appUserID:currency:amount:idempotencyKey:at:)`` stores its key as
///   `spend:<idempotencyKey>`, so a client key can never collide with a grant's or a clawback's.
///   Keys are global: reusing one for another customer, currency or amount is refused.
/// - ``markDelivery(eventID:endpoint:delivered:at:retryAt:)`` with `delivered: false` and no
///   `retryAt` gives up on that event for that endpoint.
/// - ``latestContent(bundleID:productID:)`` is the version uploaded last.
public struct SQLLedgerStore: LedgerStore {
    /// Where the ledger lives.
    let database: any SQLDatabase
    /// The fragments of SQL that differ between SQLite and PostgreSQL.
    let dialect: LedgerSQLDialect
    /// The SQLite engine this store opened itself (group commit, readers), closed by ``shutdown()``.
    let engine: SQLiteLedgerEngine?
    /// The PostgreSQL pool this store opened itself, closed by ``shutdown()``.
    let postgres: PostgresLedgerEngine?
    /// The digests of the stored signed transactions, on a SQLite ledger this store opened
    /// (loaded by ``migrate()``); `nil` where other processes write too.
    let signedDigests: SignedDigestSet?

    /// A store on a database someone else opened and will close.
    ///
    /// - Parameter database: a SQLKit database whose sessions each get a connection of their own.
    public init(database: any SQLDatabase) {
        self.database = database
        self.dialect = LedgerSQLDialect(database.dialect)
        self.engine = nil
        self.postgres = nil
        self.signedDigests = nil
    }

    private init(engine: SQLiteLedgerEngine) {
        self.database = SQLiteEngineDatabase(engine: engine)
        self.dialect = LedgerSQLDialect(database.dialect)
        self.engine = engine
        self.postgres = nil
        self.signedDigests = SignedDigestSet()
    }

    private init(postgres: PostgresLedgerEngine) {
        self.database = postgres.database
        self.dialect = .postgresql
        self.engine = nil
        self.postgres = postgres
        self.signedDigests = nil
    }

    /// Opens a PostgreSQL ledger through a pool of at most `options.maxConnections` connections,
    /// shared by every request of this process. Connections are made when first needed, so a
    /// database that is down is reported by the first operation (``migrate()`` at start).
    /// Call ``shutdown()`` at the end.
    public static func postgres(
        _ options: PostgresConnectionOptions, logger: Logger = Logger(label: "kakin.ledger.postgres")
    ) throws -> SQLLedgerStore {
        SQLLedgerStore(postgres: try PostgresLedgerEngine(options: options, logger: logger))
    }

    /// Opens a SQLite ledger. Call ``migrate()`` before first use and ``shutdown()`` at the end.
    ///
    /// - Parameters:
    ///   - path: a file, created if needed; `nil` or `":memory:"` for a private in-memory database
    ///     (one connection, gone at shutdown). A file is put in WAL mode, so readers never wait
    ///     for the writer.
    ///   - connections: kept for compatibility: there is one writer connection, which commits the
    ///     writes waiting at the same moment together (group commit), and readers open as needed.
    ///   - busyTimeout: how long a writer waits for another process's transaction to finish.
    public static func sqlite(
        path: String?, connections: Int = 4, busyTimeout: Duration = .seconds(10)
    ) async throws -> SQLLedgerStore {
        try await sqlite(path: path, connections: connections, busyTimeout: busyTimeout, logLimits: .standard)
    }

    /// ``sqlite(path:connections:busyTimeout:)`` with the write-ahead log's limits chosen (tests
    /// use small ones).
    static func sqlite(
        path: String?, connections: Int = 4, busyTimeout: Duration = .seconds(10),
        logLimits: SQLiteLedgerEngine.LogLimits
    ) async throws -> SQLLedgerStore {
        guard connections > 0 else {
            throw LedgerStoreError(.invalidArgument, "a SQLite store needs at least one connection")
        }
        let logger = Logger(label: "kakin.ledger.sqlite")
        let timeout = busyTimeout.components
        let timeoutMilliseconds = timeout.seconds * 1000 + timeout.attoseconds / 1_000_000_000_000_000
        let engine = try SQLiteLedgerEngine(
            path: path, busyTimeoutMilliseconds: timeoutMilliseconds, logLimits: logLimits, logger: logger)
        return SQLLedgerStore(engine: engine)
    }

    /// Waits for the operations in flight, then closes the connections and threads this store
    /// opened. Does nothing for a store made with ``init(database:)``.
    public func shutdown() async throws {
        await engine?.close()
        await postgres?.close()
    }

    // MARK: Schema

    /// Applies the migrations this database has not seen, each in its own transaction.
    ///
    /// A migration's ID is inserted first, with `ON CONFLICT DO NOTHING`: two stores migrating
    /// at once wait on that key, and only the one that inserted it runs the statements. On
    /// PostgreSQL the whole run also holds an advisory lock, so replicas starting together
    /// migrate one after the other (creating the same table at once can fail there even with
    /// `IF NOT EXISTS`); the others find everything applied.
    public func migrate() async throws {
        guard dialect == .postgresql else {
            try await Self.applyMigrations(dialect: dialect, on: database, writing: { try await writing($0) })
            return try await loadSignedDigests()
        }
        let dialect = self.dialect
        try await database.withSession { session in
            // Waiting for another replica's migrations, or building an index on a large table, may
            // take longer than the statement timeout requests run under.
            try await session.raw("SET statement_timeout = 0").run()
            try await Self.holdingAdvisoryLock(LedgerLock.migrations, on: session, waiting: true) {
                try await Self.applyMigrations(dialect: dialect, on: session) { body in
                    try await Self.transaction(on: session, begin: dialect.beginWrite, body)
                }
            }
            try await session.raw("RESET statement_timeout").run()
        }
    }

    /// Runs every migration not applied yet; `writing` runs one transaction.
    private static func applyMigrations(
        dialect: LedgerSQLDialect, on database: any SQLDatabase,
        writing: (@escaping @Sendable (any SQLDatabase) async throws -> Void) async throws -> Void
    ) async throws {
        try await database.raw(
            "CREATE TABLE IF NOT EXISTS \(unsafeRaw: LedgerSchema.migrationsTable) (id TEXT PRIMARY KEY)"
        ).run()
        for migration in LedgerSchema.migrations {
            try await writing { db in
                let claimed = try await db.raw(
                    """
                    INSERT INTO \(unsafeRaw: LedgerSchema.migrationsTable) (id) VALUES (\(bind: migration.id))
                    ON CONFLICT (id) DO NOTHING RETURNING id
                    """
                ).first()
                guard claimed != nil else { return }
                for statement in migration.statements(dialect) {
                    try await db.raw("\(unsafeRaw: statement)").run()
                }
            }
        }
    }

    /// The IDs of the migrations applied to this database, in the order they were defined.
    func appliedMigrations() async throws -> [String] {
        let rows = try await database.raw("SELECT id FROM \(unsafeRaw: LedgerSchema.migrationsTable)").all()
        let applied = Set(try rows.map { try $0.decode(column: "id", as: String.self) })
        return LedgerSchema.migrations.map(\.id).filter(applied.contains)
    }

    /// Loads ``signedDigests`` on the writer, so that no row is written while they are read,
    /// `pageSize` rows at a time.
    func loadSignedDigests(pageSize: Int = 10_000) async throws {
        guard let signedDigests else { return }
        try await writing { db in
            guard let connection = db as? SQLiteHandleDatabase else { return }
            let count = try await db.first(.signedDigestCount)?.decode(column: "n", as: Int.self) ?? 0
            // In pages of rows by rowid, so that a large ledger is never held in memory at once.
            try signedDigests.load(count: count) { add in
                var after: Int64 = 0
                while true {
                    let rows = try connection.handle.query(
                        LedgerStatement.signedDigestPage.text, values: [.integer(after), .integer(Int64(pageSize))])
                    for row in rows {
                        after = try row.decode(column: "rowid", as: Int64.self)
                        if let digest = try row.optional("signed_digest", as: Data.self) { add(digest) }
                    }
                    guard rows.count == pageSize else { return }
                }
            }
        }
    }

    // MARK: Transactions

    /// Runs `body` in one write transaction: committed when it returns, rolled back when it throws.
    ///
    /// `customer` names whose data the write is about (an app user ID, or an original transaction
    /// ID), when known: on PostgreSQL, the writes of one customer go to the same writer.
    ///
    /// `batchItem` is the same write as a value, for an engine that does the writes of a group
    /// together (PostgreSQL: ``recordBatch(_:on:)``); `body` runs where it does not.
    func writing<R: Sendable>(
        for customer: String? = nil, batchItem: (any Sendable)? = nil,
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        if let engine { return try await engine.write(body) }
        if let postgres { return try await postgres.writer(for: customer).write(batchItem: batchItem, body) }
        return try await inTransaction(begin: dialect.beginWrite, body)
    }

    /// Runs `body` in one read-only transaction, so it sees a single consistent state.
    func reading<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        if let engine { return try await engine.read(body) }
        if let postgres { return try await postgres.transaction(begin: dialect.beginRead, body) }
        return try await inTransaction(begin: dialect.beginRead, body)
    }

    /// Runs `body`, which runs a single statement, as a read. A statement sees one consistent state
    /// on its own, so on PostgreSQL it runs outside a transaction, on any connection of the pool:
    /// one round trip instead of three.
    func readingStatement<R: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        if let postgres { return try await body(postgres.database) }
        return try await reading(body)
    }

    private func inTransaction<R: Sendable>(
        begin: String, _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        try await database.withSession { session in try await Self.transaction(on: session, begin: begin, body) }
    }

    /// Rolls back the transaction open on `session` after `error`. On PostgreSQL, not after the
    /// connection itself failed (a statement sent on a connection the server has just closed may
    /// never be answered), and not for longer than a few seconds: the connection is closed then,
    /// which ends the transaction as surely.
    static func rollback(on session: any SQLDatabase, after error: any Error) async {
        guard let postgres = session as? PostgresSessionDatabase else {
            try? await session.raw("ROLLBACK").run()
            return
        }
        if postgres.connection.isClosed || PostgresLedgerEngine.isConnectionFailure(error) { return }
        let rolledBack = await Deadline.run(.seconds(3)) {
            (try? await session.raw("ROLLBACK").run()) != nil
        }
        if rolledBack != true { try? await postgres.connection.close() }
    }

    /// Runs `body` in one transaction on `session`, a single connection.
    static func transaction<R: Sendable>(
        on session: any SQLDatabase, begin: String, _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        try await session.raw("\(unsafeRaw: begin)").run()
        do {
            let result = try await body(session)
            try await session.raw("COMMIT").run()
            return result
        } catch {
            // When COMMIT itself failed the transaction may already be gone; nothing to add.
            await rollback(on: session, after: error)
            throw error
        }
    }
}
