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
        subcommands: [
            ServerRunCommand.self, ServerImportCommand.self, ServerBackupCommand.self, ServerRestoreCommand.self,
            ServerHealCommand.self, ServerLockoutsCommand.self, ServerUnlockCommand.self,
        ],
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
            grants, transferPolicy, extraRoots, endpoints, keys, customerTokens {secret, required}, \
            sandboxPurchases, sandboxAllowList}], clawbackPolicy, logging {format, level}, \
            limits {maxBodyBytes, maxContentBytes, idleTimeoutSeconds}, jobs {webhookIntervalSeconds, \
            webhookLeaseSeconds, reconcileIntervalSeconds}, dashboard {enabled, operatorKey, sessionMinutes, \
            trustForwardedProto, secureCookies}, operations {metricsToken, metricsListen}, rateLimits {enabled, \
            reads, uploads, aliases, offers}, trustForwardedFor and signInThrottle {sourceAttempts, \
            accountAttempts, firstWaitSeconds, maxWaitSeconds, windowSeconds}. Several servers may share one PostgreSQL database. Any value may be env:NAME to read it from the environment. Relative \
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

/// `kakin server import --config FILE --transactions IDS`: brings an existing app's purchases into
/// the ledger from the App Store Server API, resumably.
struct ServerImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import an app's purchases from the App Store Server API by their original transaction IDs.",
        discussion: """
            IDS is a text file with one original transaction ID per line (blank lines and lines starting             with # are skipped), as exported from the system before Kakin. Each purchase's history is             asked for once (a purchase an earlier history listed is skipped), verified and recorded as             reconciliation records it; the server may run meanwhile. Apple's rate limits are kept: a             refusal waits for the time Apple names. Progress is written to IDS.progress after each ID,             and a run started again goes on from there.
            """)

    @Option(help: "The server's JSON configuration file (env KAKIN_CONFIG).") var config: String?
    @Option(help: "The file of original transaction IDs, one per line.") var transactions: String
    @Option(name: .customLong("bundle-id"), help: "The app (needed when the configuration has several).")
    var bundleID: String?

    func run() async throws {
        let configuration = ServerConfiguration.fromCommandLine(config)
        let apps = configuration.apps.map(\.bundleID)
        guard let bundleID = bundleID ?? (apps.count == 1 ? apps[0] : nil) else {
            ServiceRunner.fail("the configuration has \(apps.count) apps: name one with --bundle-id")
        }
        let ids: [String]
        do {
            ids = try String(contentsOfFile: transactions, encoding: .utf8).split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        } catch {
            ServiceRunner.fail("\(transactions) cannot be read: \(error.localizedDescription)")
        }
        let progressFile = URL(fileURLWithPath: transactions + ".progress")
        let skipped = min(
            ids.count,
            (try? String(contentsOf: progressFile, encoding: .utf8)).flatMap {
                Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
            } ?? 0)
        if skipped > 0 { print("going on after the \(skipped) IDs \(progressFile.path) counts as done") }
        let report: Reconciler.Report
        do {
            report = try await configuration.withReconciler { reconciler in
                try await importWaitingForApple(reconciler, bundleID: bundleID, ids: ids.dropFirst(skipped)) {
                    done, report in
                    try Data("\(skipped + done)\n".utf8).write(to: progressFile, options: .atomic)
                    if done % 100 == 0 || skipped + done == ids.count {
                        print(
                            "\(skipped + done)/\(ids.count) IDs: \(report.transactionsSeen) transactions seen, "
                                + "\(report.transactionsRecorded) new, \(report.transactionsRevoked) revoked")
                    }
                }
            }
        } catch {
            ServiceRunner.fail(ServerError(error).message)
        }
        print(
            "imported \(ids.count - skipped) IDs: \(report.transactionsSeen) transactions seen, "
                + "\(report.transactionsRecorded) new, \(report.transactionsRevoked) revoked")
    }

    /// Imports `ids`, waiting when Apple's rate limit refuses for longer than the client waits on
    /// its own, then going on from the ID that was refused.
    private func importWaitingForApple(
        _ reconciler: Reconciler, bundleID: String, ids: ArraySlice<String>,
        done: (Int, Reconciler.Report) async throws -> Void
    ) async throws -> Reconciler.Report {
        var total = Reconciler.Report()
        var next = ids.startIndex
        while true {
            var finished = 0
            var partial = Reconciler.Report()
            do {
                let report = try await reconciler.importPurchases(
                    bundleID: bundleID, originalTransactionIDs: ids[next...]
                ) { count, report in
                    (finished, partial) = (count, report)
                    try await done(next - ids.startIndex + count, total + report)
                }
                return total + report
            } catch let error as ServerError where error.code == .appleUnavailable && error.retryAfterSeconds != nil {
                let wait = error.retryAfterSeconds ?? 1
                print("Apple refused for now (\(error.message)); waiting \(wait) s")
                try await Task.sleep(for: .seconds(wait))
                total = total + partial
                next += finished
            }
        }
    }
}
