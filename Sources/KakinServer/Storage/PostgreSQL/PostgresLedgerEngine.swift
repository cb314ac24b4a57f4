public import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresKit
import PostgresNIO
import SQLKit
import Synchronization

/// Where and how the server connects to PostgreSQL: the URL's parts and the pool's settings.
///
/// The URL is `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (`postgresql://` too). Its query
/// may carry libpq's `sslmode` (`disable`, `allow`, `prefer`, `require`, `verify-ca`,
/// `verify-full`) and `sslrootcert` (a CA file), and `pool_max_conns` (the pool size); the
/// configuration file's `postgres` object overrides them.
public struct PostgresConnectionOptions: Sendable, Hashable {
    /// Whether connections use TLS.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Never: plain TCP (a server on the same host or a private network).
        case disable
        /// TLS when the server offers it, plain TCP otherwise; the certificate is checked only
        /// against ``PostgresConnectionOptions/caFile`` when one is given.
        case prefer
        /// TLS or no connection; the server's certificate must chain to ``PostgresConnectionOptions/caFile``
        /// (or the system's roots without one) and name the host.
        case require
    }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String?
    public var tls: TLSMode
    /// A PEM file of the certificate authority that signed the server's certificate.
    public var caFile: String?
    /// The most connections this process opens (each replica has its own pool).
    public var maxConnections: Int
    /// How long a transaction waits for a connection of the pool (all busy, or PostgreSQL not
    /// reachable) before the store answers ``LedgerStoreError/Code/unavailable``: requests fail in
    /// bounded time while the database is down, and clients retry.
    public var connectionWait: Duration = .seconds(10)
    /// The schema that holds the ledger's tables (PostgreSQL's `search_path`); the user's default
    /// (`public`) when `nil`. The schema must exist.
    public var schema: String?

    /// Reads a `postgres://` URL; a URL that is not one gets a clear message.
    public init(url text: String) throws(ServerError) {
        guard let components = URLComponents(string: text),
            let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme)
        else { throw ServerError(.invalidConfiguration, "database: expected postgres://USER@HOST[:PORT]/DATABASE") }
        guard let host = components.host, !host.isEmpty else {
            throw ServerError(.invalidConfiguration, "database: the PostgreSQL URL names no host")
        }
        guard let username = components.user, !username.isEmpty else {
            throw ServerError(.invalidConfiguration, "database: the PostgreSQL URL names no user")
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = username.removingPercentEncoding ?? username
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        let name = String(components.path.drop(while: { $0 == "/" }))
        self.database = name.isEmpty ? nil : name
        self.tls = .prefer
        self.caFile = nil
        self.maxConnections = 10
        self.schema = nil
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                switch value {
                case "disable": tls = .disable
                case "allow", "prefer": tls = .prefer
                case "require", "verify-ca", "verify-full": tls = .require
                default:
                    throw ServerError(
                        .invalidConfiguration,
                        "database: sslmode \(value) is not one of disable, allow, prefer, require, verify-ca, verify-full"
                    )
                }
            case "sslrootcert":
                caFile = value
            case "pool_max_conns":
                guard let count = Int(value), (1...1000).contains(count) else {
                    throw ServerError(.invalidConfiguration, "database: pool_max_conns must be 1 to 1000")
                }
                maxConnections = count
            default:
                throw ServerError(.invalidConfiguration, "database: unknown URL parameter \(item.name)")
            }
        }
    }

    /// The TLS settings PostgresNIO takes.
    func clientTLS() throws(ServerError) -> PostgresClient.Configuration.TLS {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            guard FileManager.default.isReadableFile(atPath: caFile) else {
                throw ServerError(.invalidConfiguration, "postgres.caFile: \(caFile) cannot be read")
            }
            configuration.trustRoots = .file(caFile)
        }
        switch tls {
        case .disable:
            return .disable
        case .prefer:
            if caFile == nil { configuration.certificateVerification = .none }
            return .prefer(configuration)
        case .require:
            return .require(configuration)
        }
    }
}

/// The PostgreSQL connection pool a store opened, running until ``close()``.
final class PostgresLedgerEngine: Sendable {
    let client: PostgresClient
    let database: PostgresClientDatabase
    private let running: Task<Void, Never>
    /// How many times a transaction chosen as a deadlock victim (or failing to serialize) runs
    /// again before its error is reported.
    static let attempts = 5
    init(options: PostgresConnectionOptions, logger: Logger) throws(ServerError) {
        var configuration = PostgresClient.Configuration(
            host: options.host, port: options.port, username: options.username, password: options.password,
            database: options.database, tls: try options.clientTLS())
        configuration.options.maximumConnections = options.maxConnections
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = .seconds(10)
        if let schema = options.schema { configuration.options.additionalStartupParameters = [("search_path", schema)] }
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        self.database = PostgresClientDatabase(client: client, logger: logger, connectionWait: options.connectionWait)
        // Started at once, so the pool runs before the first lease asks for a connection.
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            self.running = Task.immediate { await client.run() }
        } else {
            self.running = Task { await client.run() }
        }
    }

    /// Runs `body` in one transaction on one connection. A transaction PostgreSQL aborted to
    /// break a deadlock, or that could not be serialized, had no effect and runs again; other
    /// failures become ``LedgerStoreError``s.
    func transaction<R: Sendable>(
        begin: String, _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        var attempt = 1
        while true {
            do {
                return try await database.withSession { session in
                    try await SQLLedgerStore.transaction(on: session, begin: begin, body)
                }
            } catch let error as PSQLError {
                let state = error.serverInfo?[.sqlState]
                if attempt < Self.attempts, state == "40P01" || state == "40001" {
                    attempt += 1
                    continue
                }
                throw Self.ledgerError(error)
            }
        }
    }

    /// The ledger's error for a PostgreSQL failure: no connection, a server shutting down, too
    /// many connections or a conflict that outlived its retries are unavailable (worth retrying
    /// later); anything else is a state the ledger does not expect.
    static func ledgerError(_ error: PSQLError) -> LedgerStoreError {
        guard let info = error.serverInfo else {
            return LedgerStoreError(.unavailable, "PostgreSQL cannot be reached: \(String(reflecting: error))")
        }
        let state = info[.sqlState] ?? ""
        let message = "PostgreSQL \(state): \(info[.message] ?? "")"
        let transient = ["08", "40", "53", "57"].contains(String(state.prefix(2)))
        return LedgerStoreError(transient ? .unavailable : .inconsistentState, message)
    }

    /// Closes the pool: connections in use finish their work first.
    func close() async {
        running.cancel()
        await running.value
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
        let logger = self.logger
        do {
            try await leasing { connection in
                try await connection.sql(queryLogLevel: nil, logger: logger).execute(sql: query, onRow)
            }
        } catch let error as PSQLError {
            throw PostgresLedgerEngine.ledgerError(error)
        }
    }

    func withSession<R: Sendable>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R
    {
        let logger = self.logger
        return try await leasing { connection in
            try await closure(connection.sql(queryLogLevel: nil, logger: logger))
        }
    }

    /// Runs `body` on a leased connection. When no connection comes within ``connectionWait``
    /// (the pool is busy, or the database is down or refuses connections), or the pool gives up,
    /// that is ``LedgerStoreError/Code/unavailable``; once `body` runs it is never cut short.
    private func leasing<R: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> R
    ) async throws -> R {
        let leased = LeaseFlag()
        let (client, wait) = (self.client, connectionWait)
        do {
            return try await withThrowingTaskGroup(of: R?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        leased.state.withLock { $0 = true }
                        return try await body(connection)
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
        } catch where !leased.state.withLock({ $0 }) {
            if let error = error as? LedgerStoreError { throw error }
            if let error = error as? PSQLError { throw PostgresLedgerEngine.ledgerError(error) }
            throw LedgerStoreError(.unavailable, "PostgreSQL cannot be reached: \(error)")
        }
    }
}
