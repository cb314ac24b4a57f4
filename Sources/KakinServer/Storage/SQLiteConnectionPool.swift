import Logging
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit

/// A fixed set of SQLite connections, lent out one session at a time.
///
/// A SQLite connection runs one transaction at a time, so a session (a transaction's statements)
/// must have a connection to itself; the pool only decides who uses which connection and when.
/// It does not make anything correct: between connections, SQLite's own locks (`BEGIN IMMEDIATE`
/// and the busy timeout) order the writers, exactly as PostgreSQL would order several replicas.
actor SQLiteConnectionPool {
    private var idle: [SQLiteConnection]
    private var waiting: [CheckedContinuation<SQLiteConnection, any Error>] = []
    private var isClosed = false
    private let connectionCount: Int
    private let threadPool: NIOThreadPool
    /// Where the connections complete their futures.
    nonisolated let eventLoop: any EventLoop

    /// Opens `count` connections to `storage` and prepares each of them.
    ///
    /// - Parameter pragmas: statements run on every new connection (busy timeout, foreign keys);
    ///   `firstPragmas` then run on the first one only, before the others open (the journal mode,
    ///   which the file remembers).
    static func open(
        storage: SQLiteConnection.Storage, count: Int, firstPragmas: [String], pragmas: [String],
        logger: Logger
    ) async throws -> SQLiteConnectionPool {
        // Each connection waiting on SQLite's busy handler holds a thread, so the connection
        // that owns the write lock must always find one free: one thread per connection.
        let threadPool = NIOThreadPool(numberOfThreads: count)
        threadPool.start()
        let eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        var connections: [SQLiteConnection] = []
        do {
            for index in 0..<count {
                let connection = try await SQLiteConnection.open(
                    storage: storage, threadPool: threadPool, logger: logger, on: eventLoop)
                connections.append(connection)
                for pragma in pragmas + (index == 0 ? firstPragmas : []) {
                    _ = try await connection.query(pragma, [])
                }
            }
        } catch {
            for connection in connections { try? await connection.close() }
            try? await threadPool.shutdownGracefully()
            throw error
        }
        return SQLiteConnectionPool(connections: connections, threadPool: threadPool, eventLoop: eventLoop)
    }

    private init(connections: [SQLiteConnection], threadPool: NIOThreadPool, eventLoop: any EventLoop) {
        self.idle = connections
        self.eventLoop = eventLoop
        self.connectionCount = connections.count
        self.threadPool = threadPool
    }

    /// Waits for a free connection; callers hand it back with ``release(_:)``.
    func lease() async throws -> SQLiteConnection {
        guard !isClosed else { throw LedgerStoreError(.unavailable, "the SQLite store was shut down") }
        if let connection = idle.popLast() { return connection }
        return try await withCheckedThrowingContinuation { waiting.append($0) }
    }

    /// Returns a connection to the pool, or to the longest waiting caller.
    func release(_ connection: SQLiteConnection) {
        if waiting.isEmpty {
            idle.append(connection)
        } else {
            waiting.removeFirst().resume(returning: connection)
        }
    }

    /// Runs `body` with a connection of its own.
    nonisolated func withConnection<R>(_ body: (SQLiteConnection) async throws -> R) async throws -> R {
        let connection = try await lease()
        do {
            let result = try await body(connection)
            await release(connection)
            return result
        } catch {
            await release(connection)
            throw error
        }
    }

    /// Waits until every connection is back (operations in flight finish), closes them all and
    /// stops the threads. Later calls fail with ``LedgerStoreError/Code/unavailable``.
    func close() async throws {
        guard !isClosed else { return }
        var connections: [SQLiteConnection] = []
        for _ in 0..<connectionCount {
            connections.append(try await lease())
        }
        isClosed = true
        for connection in connections {
            try await connection.close()
        }
        try await threadPool.shutdownGracefully()
    }
}

/// The pool seen through SQLKit: single statements borrow any free connection, and
/// ``withSession(_:)`` keeps one connection for the whole closure, which is what a transaction needs.
struct SQLitePoolDatabase: SQLDatabase {
    let pool: SQLiteConnectionPool
    let logger: Logger
    let eventLoop: any EventLoop
    var dialect: any SQLDialect { SQLiteDialect() }
    var queryLogLevel: Logger.Level? { .trace }

    func execute(
        sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void
    ) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await pool.withConnection { connection in
            try await connection.sql(queryLogLevel: queryLogLevel).execute(sql: query, onRow)
        }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await pool.withConnection { connection in
            try await closure(connection.sql(queryLogLevel: queryLogLevel))
        }
    }
}
