import ArgumentParser
import Foundation
import Hummingbird
import KakinDashboard
import KakinServer
import KakinLedger
import Logging

/// `kakin server`: the purchase server in production, and the operators' commands beside it.
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Run the purchase server in front of the real App Store, or act on its ledger.",
        subcommands: [ServerRunCommand.self, ServerLockoutsCommand.self, ServerUnlockCommand.self],
        defaultSubcommand: ServerRunCommand.self)
}

/// `kakin server [run] --config FILE`: the purchase server alone, in front of the real App Store.
struct ServerRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the purchase server alone, in front of the real App Store (no sandbox).",
        discussion: """
            FILE is JSON with the keys listen {host, port}, database (sqlite:PATH or \
            postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE), postgres {maxConnections, connectionWaitSeconds, writers, tls, caFile, schema}, \
            serverKey (PEM path, \
            made on first start), keys {publishable, secret}, webhooks [{url, secret}], apps [{bundleId, \
            appAppleId, environments, sharedSecret, appStoreServerAPI {keyId, issuerId, privateKey}, catalog, \
            grants, transferPolicy, extraRoots, endpoints, keys}], clawbackPolicy, logging {format, level}, \
            limits {maxBodyBytes, maxContentBytes, idleTimeoutSeconds}, jobs {webhookIntervalSeconds, \
            webhookLeaseSeconds, reconcileIntervalSeconds}, dashboard {enabled, adminPassword, sessionMinutes, \
            trustForwardedProto} and signInThrottle {sourceAttempts, accountAttempts, firstWaitSeconds, \
            maxWaitSeconds, windowSeconds, trustForwardedFor}. Several servers may share one PostgreSQL database. Any value may be env:NAME to read it from the environment. Relative \
            paths are taken from the file's directory. Unknown keys stop the start.
            """)

    @Option(help: "The JSON configuration file (env KAKIN_CONFIG).") var config: String?
    @Option(
        help: """
            Event loop threads (env KAKIN_THREADS; default one per core the process may use). Servers \
            sharing one machine each take their share of its cores.
            """)
    var threads: Int?

    func validate() throws {
        try KakinCommand.validateThreads(threads, environment: ProcessInfo.processInfo.environment)
    }

    func run() async throws {
        let configuration = ServerConfiguration.fromCommandLine(config)
        ServiceRunner.bootstrapLogging(format: configuration.logFormat, level: configuration.logLevel)
        let listen = configuration.listen
        var dependencies = ServerDependencies()
        dependencies.addDashboard()
        let apps = configuration.apps.map(\.bundleID).joined(separator: ", ")
        dependencies.onServerRunning = { port in
            let banner = """
                Kakin purchase server on http://\(listen.host):\(port)
                  apps:          \(apps)
                  notifications: http://\(listen.host):\(port)/v1/notifications/apple
                  metrics:       http://\(listen.host):\(port)/metrics

                """
            FileHandle.standardOutput.write(Data(banner.utf8))
        }
        let application: any ApplicationProtocol
        do { application = try await buildApplication(configuration: configuration, dependencies: dependencies) } catch
        {
            ServiceRunner.fail(ServerError(error).message)
        }
        try await ServiceRunner.run(
            [application], logger: Logger(label: "kakin.server"), addresses: ["\(listen.host):\(listen.port)"])
    }
}

extension ServerConfiguration {
    /// The configuration named by `--config` (or `KAKIN_CONFIG`); one line and exit 1 when it is
    /// missing or bad.
    static func fromCommandLine(_ config: String?) -> ServerConfiguration {
        guard let path = config ?? ProcessInfo.processInfo.environment["KAKIN_CONFIG"] else {
            ServiceRunner.fail("kakin server needs --config FILE")
        }
        do { return try ServerConfiguration.load(contentsOf: URL(fileURLWithPath: path)) } catch {
            ServiceRunner.fail(error.message)
        }
    }
}

/// `kakin server lockouts --config FILE`: the addresses and accounts with failed sign-ins counted,
/// and how long each must still wait.
struct ServerLockoutsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lockouts",
        abstract: "List the addresses and accounts with failed sign-ins, and how long each must wait.",
        discussion: """
            One line per subject (source:ADDRESS or account:NAME): its failures and, when it must wait, \
            until when. Every server sharing the ledger counts into the same list.
            """)

    @Option(help: "The server's JSON configuration file (env KAKIN_CONFIG).") var config: String?

    func run() async throws {
        let configuration = ServerConfiguration.fromCommandLine(config)
        let counts: [SignInFailureCount]
        do { counts = try await configuration.withLedger { try await $0.signInFailures() } } catch {
            ServiceRunner.fail(ServerError(error).message)
        }
        let now = Date()
        let formatter = ISO8601DateFormatter()
        var lines: [String] = []
        for count in counts {
            var line = "\(count.subject.key) failures=\(count.failures)"
            if count.lockedUntil > now { line += " waits-until=\(formatter.string(from: count.lockedUntil))" }
            lines.append(line)
        }
        print(lines.isEmpty ? "no failed sign-ins are counted" : lines.joined(separator: "\n"))
    }
}

/// `kakin server unlock --config FILE (--source ADDRESS | --account NAME | --all)`: ends a wait
/// imposed after failed sign-ins, on every server sharing the ledger.
struct ServerUnlockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Forget the failed sign-ins of an address or account, ending its wait on every server.",
        discussion: """
            --account dashboard clears the dashboard account (which every address's wrong passwords count \
            against). Every server sharing the ledger lets the subject in again at its next attempt.
            """)

    @Option(help: "The server's JSON configuration file (env KAKIN_CONFIG).") var config: String?
    @Option(help: "A client address, as `kakin server lockouts` lists it.") var source: String?
    @Option(help: "An account (`dashboard`).") var account: String?
    @Flag(help: "Every address and account.") var all = false

    func validate() throws {
        guard [source != nil, account != nil, all].filter({ $0 }).count == 1 else {
            throw ValidationError("give exactly one of --source, --account and --all")
        }
    }

    func run() async throws {
        let configuration = ServerConfiguration.fromCommandLine(config)
        let subject: SignInSubject? = source.map { .source($0) } ?? account.map { .account($0) }
        let cleared: Int
        do { cleared = try await configuration.withLedger { try await $0.clearSignInFailures(subject) } } catch {
            ServiceRunner.fail(ServerError(error).message)
        }
        print("cleared \(cleared) \(cleared == 1 ? "subject" : "subjects")\(subject.map { " (\($0.key))" } ?? "")")
    }
}
