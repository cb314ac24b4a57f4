import Foundation
import NIOSSL
import PostgresNIO

/// Where and how the server connects to PostgreSQL: the URL's parts and the pool's settings.
///
/// The URL is `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (`postgresql://` too), or with
/// several hosts, libpq's way, `postgres://USER@HOST1[:PORT1],HOST2[:PORT2]/DATABASE`: a primary and
/// its standbys, of which the ledger writes to the one that is not in recovery. Its query
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

    /// A host of the cluster and its TCP port.
    public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        /// The host name or address.
        public var host: String
        /// The TCP port; 5432 when the URL names none.
        public var port: Int

        /// Creates an endpoint.
        public init(host: String, port: Int = 5432) {
            self.host = host
            self.port = port
        }

        /// `HOST:PORT`.
        public var description: String { "\(host):\(port)" }
    }

    /// The server's host name or address (the first host the URL names).
    public var host: String
    /// The server's TCP port; 5432 when the URL names none.
    public var port: Int
    /// The hosts the URL names after the first, in its order.
    public var otherHosts: [Endpoint]
    /// Every host the URL names, in its order: ``host``:``port``, then ``otherHosts``. With more
    /// than one, the ledger finds the primary among them when it starts and again whenever the one
    /// it writes to stops being the primary (see ``PostgresLedger``).
    public var endpoints: [Endpoint] { [Endpoint(host: host, port: port)] + otherHosts }
    /// The user to connect as.
    public var username: String
    /// The user's password; `nil` when the server asks for none.
    public var password: String?
    /// The database to use; `nil` takes the user's default (a database named like the user).
    public var database: String?
    /// Whether connections use TLS; `prefer` unless the URL's `sslmode` says otherwise.
    public var tls: TLSMode
    /// A PEM file of the certificate authority that signed the server's certificate.
    public var caFile: String?
    /// The most connections this process opens (each replica has its own pool).
    public var maxConnections: Int
    /// How long a transaction waits for a connection of the pool (all busy, or PostgreSQL not
    /// reachable) before the store answers ``LedgerStoreError/Code/unavailable``: requests fail in
    /// bounded time while the database is down, and clients retry. It is also every statement's
    /// `statement_timeout`, and every ledger operation is answered within it and a second more
    /// (see ``PostgresLedger``): 3 seconds by default, so that while PostgreSQL does not answer
    /// an upload (a lookup, then a write) ends within 8 seconds.
    public var connectionWait: Duration = .seconds(3)
    /// How many writers this process runs (each holds one connection of the pool while it has
    /// writes to commit): one by default. One writer makes the largest groups, so the fewest
    /// statements and commits per purchase, and the replicas' writers together keep the database
    /// busy. More writers keep PostgreSQL busier between round trips when a single replica must
    /// fill a many-core primary on its own. URL parameter `writers`.
    public var writers = 1
    /// The schema that holds the ledger's tables (PostgreSQL's `search_path`); the user's default
    /// (`public`) when `nil`. The schema must exist.
    public var schema: String?

    /// Reads a `postgres://` URL; a URL that is not one gets a clear message.
    public init(url: String) throws(LedgerStoreError) {
        let (text, others) = try Self.splittingHosts(url)
        guard let components = URLComponents(string: text),
            let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme)
        else { throw LedgerStoreError(.invalidArgument, "database: expected postgres://USER@HOST[:PORT]/DATABASE") }
        guard let host = components.host, !host.isEmpty else {
            throw LedgerStoreError(.invalidArgument, "database: the PostgreSQL URL names no host")
        }
        guard let username = components.user, !username.isEmpty else {
            throw LedgerStoreError(.invalidArgument, "database: the PostgreSQL URL names no user")
        }
        self.host = host
        self.port = components.port ?? 5432
        self.otherHosts = others
        self.username = username.removingPercentEncoding ?? username
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        let name = String(components.path.drop(while: { $0 == "/" }))
        self.database = name.isEmpty ? nil : name
        self.tls = .prefer
        self.caFile = nil
        self.maxConnections = 10
        self.writers = 1
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
                    throw LedgerStoreError(
                        .invalidArgument,
                        "database: sslmode \(value) is not one of disable, allow, prefer, require, verify-ca, verify-full"
                    )
                }
            case "sslrootcert":
                caFile = value
            case "writers":
                guard let count = Int(value), (1...64).contains(count) else {
                    throw LedgerStoreError(.invalidArgument, "database: writers must be 1 to 64")
                }
                writers = count
            case "pool_max_conns":
                guard let count = Int(value), (1...1000).contains(count) else {
                    throw LedgerStoreError(.invalidArgument, "database: pool_max_conns must be 1 to 1000")
                }
                maxConnections = count
            default:
                throw LedgerStoreError(.invalidArgument, "database: unknown URL parameter \(item.name)")
            }
        }
    }

    /// The URL with only its first host, and the endpoints of the others (`HOST1,HOST2:PORT2`).
    private static func splittingHosts(_ url: String) throws(LedgerStoreError) -> (String, [Endpoint]) {
        guard let scheme = url.range(of: "://") else { return (url, []) }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex
        let hostsStart = rest[..<authorityEnd].lastIndex(of: "@").map { rest.index(after: $0) } ?? rest.startIndex
        let hosts = rest[hostsStart..<authorityEnd].split(separator: ",", omittingEmptySubsequences: false)
        guard hosts.count > 1 else { return (url, []) }
        var others: [Endpoint] = []
        for text in hosts.dropFirst() {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard !text.isEmpty, parts.count <= 2, !parts[0].isEmpty else {
                throw LedgerStoreError(.invalidArgument, "database: \"\(text)\" is not HOST[:PORT] in the URL's list of hosts")
            }
            guard parts.count == 1 || Int(parts[1]).map({ (1...65535).contains($0) }) == true else {
                throw LedgerStoreError(.invalidArgument, "database: \(text) names no valid port")
            }
            others.append(Endpoint(host: String(parts[0]), port: parts.count == 2 ? Int(parts[1])! : 5432))
        }
        return (String(url[..<hostsStart]) + hosts[0] + url[authorityEnd...], others)
    }

    /// The TLS settings PostgresNIO takes.
    func clientTLS() throws(LedgerStoreError) -> PostgresClient.Configuration.TLS {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            guard FileManager.default.isReadableFile(atPath: caFile) else {
                throw LedgerStoreError(.invalidArgument, "postgres.caFile: \(caFile) cannot be read")
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
