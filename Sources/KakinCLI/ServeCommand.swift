import AppStoreSecurity
import ArgumentParser
import Foundation
import Hummingbird
import KakinDashboard
import KakinServer
import KakinLedger
import Logging
import ServiceLifecycle
import StoreSandbox

/// `kakin serve`: the purchase server and an embedded sandbox App Store, with one command.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the purchase server with an embedded sandbox App Store (SQLite in the data directory).",
        discussion: """
            Settings come from flags, then the environment (KAKIN_PORT, KAKIN_SANDBOX_PORT, KAKIN_HOST, \
            KAKIN_DATA, KAKIN_CATALOG, KAKIN_GRANTS, KAKIN_BUNDLE_ID, KAKIN_ADMIN_PASSWORD, KAKIN_DATABASE, \
            KAKIN_SANDBOX_TOKEN), then a JSON file (--config or KAKIN_CONFIG, with the keys port, sandboxPort, \
            host, data, catalog, grants, bundleId, clawbackPolicy, transferPolicy, revocation, webhooks, \
            adminPassword, database, sandboxToken, retention: the app's retention rules in the shape of a \
            production configuration's apps[].retention, and stripe: the app's Stripe account and web checkout in \
            the shape of apps[].stripe), \
            then defaults. Keys, the sandbox CA and the databases are made on first start and kept in the data \
            directory; --database postgres://USER@HOST/DB puts the purchase ledger in PostgreSQL instead. \
            --revocation sets how the server checks the signing certificates against the sandbox's OCSP \
            responder: require refuses a transaction when no answer can be had, bestEffort (the Sandbox \
            default) lets it through, off does not ask; a revoked certificate is refused unless off. \
            The sandbox sends its Get Retention Message requests to the server's /v1/retention/apple; \
            --retention-test-requests, --retention-test-concurrency and --retention-test-seconds set how \
            its performance test runs. Bound to anything but loopback (--host 0.0.0.0), the sandbox's device and control APIs \
            (/v1/device, /v1/control), with which anyone could mint purchases the server trusts, answer \
            this machine only; --sandbox-token TOKEN lets other hosts in with Authorization: Bearer TOKEN.
            """)

    @Option(help: "A JSON configuration file (env KAKIN_CONFIG).") var config: String?
    @Option(help: "The server's port (env KAKIN_PORT; default 8080).") var port: Int?
    @Option(name: .customLong("sandbox-port"), help: "The sandbox's port (env KAKIN_SANDBOX_PORT; default 8081).")
    var sandboxPort: Int?
    @Option(help: "The host to bind (env KAKIN_HOST; default 127.0.0.1).") var host: String?
    @Option(
        name: .customLong("sandbox-token"),
        help: """
            A token of 16 characters or more that other hosts present (Authorization: Bearer TOKEN) to use \
            the sandbox's device and control APIs when --host is not loopback (env KAKIN_SANDBOX_TOKEN).
            """)
    var sandboxToken: String?
    @Option(help: "The data directory (env KAKIN_DATA; default ./kakin-data).") var data: String?
    @Option(help: "The .storekit catalog (env KAKIN_CATALOG).") var catalog: String?
    @Option(help: "The grants file (env KAKIN_GRANTS).") var grants: String?
    @Option(name: .customLong("bundle-id"), help: "The app's bundle ID (env KAKIN_BUNDLE_ID).") var bundleID: String?
    @Option(name: .customLong("clawback-policy"), help: "allowNegative or clampAtZero (default) for refunded currency.")
    var clawbackPolicy: String?
    @Option(name: .customLong("webhook"), help: "A webhook endpoint as URL=SECRET; repeatable.") var webhooks:
        [String] = []
    @Option(
        name: .customLong("transfer-policy"),
        help: "keepWithOriginal (default) or transferToNewUser: what a restore by another customer does.")
    var transferPolicy: String?
    @Option(
        help: """
            require, bestEffort (default, as for Sandbox data) or off: how the signing certificates are \
            checked for revocation over OCSP.
            """)
    var revocation: String?
    @Option(name: .customLong("log-format"), help: "text (default) or json.") var logFormat: String?
    @Option(
        name: .customLong("rate-limits"),
        help: """
            on (default) or off (env KAKIN_RATE_LIMITS): whether publishable-key requests are limited per \
            client address. Turn them off for load tests from one address only.
            """)
    var rateLimits: String?
    @Option(
        name: .customLong("admin-password"),
        help: "A dashboard password besides the secret key, 12 characters or more (env KAKIN_ADMIN_PASSWORD).")
    var adminPassword: String?
    @Option(
        help: """
            The purchase ledger: sqlite:PATH, or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE \
            (env KAKIN_DATABASE; default SQLite in the data directory).
            """)
    var database: String?
    @Option(
        help: """
            Event loop threads (env KAKIN_THREADS; default one per core the process may use). Servers \
            sharing one machine each take their share of its cores.
            """)
    var threads: Int?
    @Option(
        name: .customLong("reconcile-interval"),
        help: """
            Seconds between reconciliations with the App Store and Stripe (env KAKIN_RECONCILE_INTERVAL; \
            default 600; 0 turns them off): how soon a purchase whose notification or webhook never \
            arrived is recorded.
            """)
    var reconcileInterval: Int?
    @OptionGroup var retentionTest: RetentionTestOptions

    /// Flags over environment over defaults, validated with one clear message.
    func resolvedOptions(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> ServeEnvironment.Options {
        var options = ServeEnvironment.Options()
        var file = ServeConfigurationFile()
        if let path = config ?? environment["KAKIN_CONFIG"] {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ValidationError("the configuration file \(path) cannot be read")
            }
            do { file = try JSONDecoder().decode(ServeConfigurationFile.self, from: data) } catch {
                throw ValidationError("the configuration file \(path) is not valid: \(error)")
            }
            do {
                options.retention = try ServerConfiguration.retentionPolicy(in: data)
                options.stripe = try ServerConfiguration.stripeAccount(in: data)
            } catch {
                throw ValidationError("the configuration file \(path): \(error.message)")
            }
        }
        options.port = file.port ?? options.port
        options.sandboxPort = file.sandboxPort ?? options.sandboxPort
        options.host = file.host ?? options.host
        options.data = file.data ?? options.data
        options.catalog = file.catalog ?? options.catalog
        options.grants = file.grants ?? options.grants
        options.bundleID = file.bundleId ?? options.bundleID
        func port(_ flag: Int?, _ name: String, _ fallback: Int) throws -> Int {
            if let flag { return flag }
            guard let text = environment[name] else { return fallback }
            guard let value = Int(text) else { throw ValidationError("\(name) must be a port number; found \(text)") }
            return value
        }
        options.port = try port(self.port, "KAKIN_PORT", options.port)
        options.sandboxPort = try port(sandboxPort, "KAKIN_SANDBOX_PORT", options.sandboxPort)
        options.host = host ?? environment["KAKIN_HOST"] ?? options.host
        options.data = data ?? environment["KAKIN_DATA"] ?? options.data
        options.catalog = catalog ?? environment["KAKIN_CATALOG"] ?? options.catalog
        options.grants = grants ?? environment["KAKIN_GRANTS"] ?? options.grants
        options.bundleID = bundleID ?? environment["KAKIN_BUNDLE_ID"] ?? options.bundleID
        options.database = database ?? environment["KAKIN_DATABASE"] ?? file.database
        options.sandboxToken = sandboxToken ?? environment["KAKIN_SANDBOX_TOKEN"] ?? file.sandboxToken
        if let token = options.sandboxToken, token.count < 16 || token.contains(where: \.isWhitespace) {
            throw ValidationError("--sandbox-token must be at least 16 characters, without spaces")
        }
        if let database = options.database, !database.hasPrefix("sqlite:") {
            do { _ = try PostgresConnectionOptions(url: database) } catch {
                throw ValidationError("--database: \(error.message)")
            }
        }
        for (name, value) in [("--port", options.port), ("--sandbox-port", options.sandboxPort)] {
            guard (1...65_535).contains(value) else { throw ValidationError("\(name) must be between 1 and 65535") }
        }
        guard options.port != options.sandboxPort else {
            throw ValidationError("--port and --sandbox-port must differ")
        }
        for (name, path) in [("catalog", options.catalog), ("grants", options.grants)] {
            guard FileManager.default.fileExists(atPath: path) else {
                throw ValidationError("the \(name) file \(path) does not exist")
            }
        }
        if let clawbackPolicy = clawbackPolicy ?? file.clawbackPolicy {
            guard let policy = ClawbackPolicy(rawValue: clawbackPolicy) else {
                throw ValidationError("--clawback-policy must be allowNegative or clampAtZero")
            }
            options.clawbackPolicy = policy
        }
        if let text = reconcileInterval.map(String.init) ?? environment["KAKIN_RECONCILE_INTERVAL"] {
            guard let seconds = Int(text), seconds >= 0 else {
                throw ValidationError("--reconcile-interval must be a number of seconds, 0 or more; found \(text)")
            }
            options.reconcileIntervalSeconds = seconds
        }
        switch rateLimits ?? environment["KAKIN_RATE_LIMITS"] ?? "on" {
        case "on": options.rateLimits = true
        case "off": options.rateLimits = false
        case let other: throw ValidationError("--rate-limits must be on or off; found \(other)")
        }
        if let transferPolicy = transferPolicy ?? file.transferPolicy {
            guard let policy = TransferPolicy(rawValue: transferPolicy) else {
                throw ValidationError("--transfer-policy must be keepWithOriginal or transferToNewUser")
            }
            options.transferPolicy = policy
        }
        if let revocation = revocation ?? file.revocation {
            guard let mode = RevocationMode(rawValue: revocation) else {
                throw ValidationError("--revocation must be require, bestEffort or off; found \(revocation)")
            }
            options.revocation = mode
        }
        if let logFormat = logFormat ?? environment["KAKIN_LOG_FORMAT"] {
            guard let format = ServerConfiguration.LogFormat(rawValue: logFormat) else {
                throw ValidationError("--log-format must be text or json")
            }
            options.logFormat = format
        }
        if let password = adminPassword ?? environment["KAKIN_ADMIN_PASSWORD"] ?? file.adminPassword {
            guard password.count >= 12 else {
                throw ValidationError("--admin-password must be at least 12 characters")
            }
            options.adminPassword = password
        }
        options.retentionPerformanceTest = retentionTest.config
        options.webhooks = try (webhooks.isEmpty ? file.webhooks ?? [] : webhooks).map { text in
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let url = URL(string: parts[0]), url.scheme != nil, !parts[1].isEmpty else {
                throw ValidationError("--webhook must be URL=SECRET; found \(text)")
            }
            return WebhookEndpoint(url: url, secret: parts[1])
        }
        return options
    }

    func validate() throws {
        try KakinCommand.validateThreads(threads, environment: ProcessInfo.processInfo.environment)
        _ = try resolvedOptions()
    }

    func run() async throws {
        let options = try resolvedOptions()
        ServiceRunner.bootstrapLogging(format: options.logFormat, level: "warning")
        let environment: ServeEnvironment
        do { environment = try await ServeEnvironment.make(options) } catch {
            ServiceRunner.fail("cannot prepare \(options.data): \(error)")
        }
        let banner = """
            Kakin is running.
              purchase server:  \(environment.serverURL)   (API: \(environment.serverURL)/openapi.yaml)
              dashboard:        \(environment.serverURL)/dashboard   (sign in with the secret key\(options.adminPassword == nil ? "" : " or the admin password"))
              sandbox App Store: \(environment.sandboxURL)  (device /v1/device, control /v1/control, /verifyReceipt, /inApps)
              data:             \(options.data) (\(options.database == nil ? "SQLite ledger kakin.sqlite, " : "")sandbox state and CA, keys.json, api-key.p8)
              app:              \(options.bundleID)
              publishable key:  \(environment.keys.publicKey)
              secret key:       \(environment.keys.secretKey)
              sandbox root CA:  \(options.data)/sandbox/ca/root.pem   (OCSP: \(environment.ocspURL))
              sandbox access:   \(environment.sandboxAccessSummary)

            """
        // The banner waits until both ports are bound.
        let barrier = StartBarrier(names: ["server", "sandbox"]) { _ in
            FileHandle.standardOutput.write(Data(banner.utf8))
        }
        // The server's ledger follows the sandbox's clock (see ServeEnvironment.serverDependencies).
        var dependencies = environment.serverDependencies()
        dependencies.logger = Logger(label: "kakin.server")
        dependencies.onServerRunning = { port in await barrier.started("server", port: port) }
        let server: any ApplicationProtocol
        do {
            server = try await buildApplication(configuration: environment.server, dependencies: dependencies)
        } catch {
            ServiceRunner.fail(ServerError(error).message)
        }
        let sandbox = Application(
            router: environment.sandboxRouter(),
            configuration: .init(
                address: .hostname(options.host, port: options.sandboxPort), serverName: "kakin-sandbox"),
            onServerRunning: { channel in await barrier.started("sandbox", port: channel.localAddress?.port ?? 0) })
        let engine = environment.sandbox.engine
        let logger = Logger(label: "kakin.sandbox")
        let transport = URLSessionNotificationTransport()
        let sandboxWork = PeriodicJob(name: "sandbox renewals and notifications", every: .seconds(1), logger: logger) {
            await engine.runDueWork(using: transport)
        }
        try await ServiceRunner.run(
            [server, sandbox, sandboxWork], logger: logger,
            addresses: ["\(options.host):\(options.port)", "\(options.host):\(options.sandboxPort)"])
    }
}

/// The JSON form of `kakin serve`'s settings; every key is optional.
struct ServeConfigurationFile: Decodable {
    var port: Int?
    var sandboxPort: Int?
    var host: String?
    var data: String?
    var catalog: String?
    var grants: String?
    var bundleId: String?
    var clawbackPolicy: String?
    var transferPolicy: String?
    /// `require`, `bestEffort` or `off`; the Sandbox default (`bestEffort`) when absent.
    var revocation: String?
    /// `URL=SECRET` entries.
    var webhooks: [String]?
    /// A dashboard password besides the secret key.
    var adminPassword: String?
    var database: String?
    /// What other hosts present to use the sandbox's device and control APIs.
    var sandboxToken: String?
}
