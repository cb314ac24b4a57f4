import ArgumentParser
import Foundation
import KakinLedger
import KakinServer
import Logging

/// `kakin server backup --config FILE --to DIR`: a consistent copy of a SQLite ledger, taken while
/// the servers go on serving.
struct ServerBackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the SQLite ledger, consistently, while the server serves.",
        discussion: """
            DIR must be new or empty. It receives ledger.sqlite (a complete database) and manifest.json \
            (the schema version, when the copy was taken, the ledger's last event and how many \
            transactions it holds), readable by their owner only (the directory 0700, the files 0600). \
            Every purchase acknowledged before the copy began is in it; writes go on meanwhile. A \
            PostgreSQL ledger is backed up with PostgreSQL's own tools (pg_basebackup and WAL \
            archiving): see "Backups and Recovery" in the server's docs.
            """)

    @Option(help: "The server's JSON configuration file (env KAKIN_CONFIG).") var config: String?
    @Option(help: "The directory that receives the backup (new or empty).") var to: String

    func run() async throws {
        let configuration = ServerConfiguration.fromCommandLine(config)
        let path = Self.ledgerPath(configuration)
        do {
            let manifest = try SQLiteBackup.backup(ledgerAt: path, to: URL(fileURLWithPath: to))
            print(
                "backed up \(path) to \(to): \(manifest.transactions) transactions, schema \(manifest.schemaVersion), "
                    + "last event \(manifest.lastEventID.map(String.init) ?? "none"), "
                    + "taken at \(ISO8601DateFormatter().string(from: manifest.takenAt))")
        } catch {
            ServiceRunner.fail("the backup failed: \(ServerError(error).message)")
        }
    }

    /// The SQLite ledger's file, or the reason the command cannot act on this configuration.
    static func ledgerPath(_ configuration: ServerConfiguration) -> String {
        let path: String?
        do { path = try configuration.sqliteLedgerPath() } catch { ServiceRunner.fail(ServerError(error).message) }
        guard let path else {
            ServiceRunner.fail(
                configuration.database.hasPrefix("sqlite:")
                    ? "a ledger in memory has nothing to back up or restore"
                    : "a PostgreSQL ledger is backed up and restored with PostgreSQL's tools (pg_basebackup, WAL "
                        + "archiving): see \"Backups and Recovery\" in the server's docs")
        }
        return path
    }
}

/// `kakin server restore --config FILE --from DIR`: puts a backup in place of the SQLite ledger,
/// then asks Apple for what happened since the backup was taken.
struct ServerRestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put a backup in place of the SQLite ledger, then heal it from Apple's records.",
        discussion: """
            Refused while any server (or any other process) has the ledger open: stop them first. After \
            the copy, each app with an App Store Server API key has Apple's notification history read \
            from the backup's time, and the purchases the notifications name that the ledger lacks have \
            their transaction histories read, all recorded as the server records them; the command \
            reports what came back. Spends of consumable balances made after the backup cannot come \
            back. --no-heal skips asking Apple (a server's periodic reconciliation reads from the \
            restored checkpoint later).
            """)

    @Option(help: "The server's JSON configuration file (env KAKIN_CONFIG).") var config: String?
    @Option(help: "The backup's directory, as `kakin server backup` wrote it.") var from: String
    @Flag(name: .customLong("no-heal"), help: "Restore only: ask Apple for nothing.") var noHeal = false

    func run() async throws {
        let configuration = ServerConfiguration.fromCommandLine(config)
        let path = ServerBackupCommand.ledgerPath(configuration)
        let manifest: LedgerBackupManifest
        do { manifest = try SQLiteBackup.restore(from: URL(fileURLWithPath: from), toLedgerAt: path) } catch {
            ServiceRunner.fail("the restore failed: \(ServerError(error).message)")
        }
        let taken = ISO8601DateFormatter().string(from: manifest.takenAt)
        print("restored \(path) from \(from): \(manifest.transactions) transactions, taken at \(taken)")
        guard !noHeal else { return }
        do { print(try await ServerHealCommand.heal(configuration, since: manifest.takenAt)) } catch {
            ServiceRunner.fail("the ledger was restored, and the heal from Apple failed: \(ServerError(error).message)")
        }
    }
}

/// `kakin server heal --config FILE --since TIME`: asks Apple for what happened since a moment and
/// records what the ledger lacks; after a restore of any engine (`restore` runs it itself).
struct ServerHealCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "heal",
        abstract: "Bring back from Apple's records what happened since a moment (after a restore).",
        discussion: """
            For each app with an App Store Server API key: Apple's notification history from TIME (ISO \
            8601, such as 2026-11-27T23:41:09Z) to now, and the transaction histories of the purchases \
            it names that the ledger lacks, recorded as the server records them. Run it after a \
            PostgreSQL point-in-time recovery, from the moment recovery stopped. Idempotent.
            """)

    @Option(help: "The server's JSON configuration file (env KAKIN_CONFIG).") var config: String?
    @Option(help: "The moment from which to ask (ISO 8601).") var since: String

    func run() async throws {
        let configuration = ServerConfiguration.fromCommandLine(config)
        guard let moment = ISO8601DateFormatter().date(from: since) else {
            ServiceRunner.fail("--since \(since) is not an ISO 8601 time such as 2026-11-27T23:41:09Z")
        }
        do { print(try await Self.heal(configuration, since: moment)) } catch {
            ServiceRunner.fail("the heal from Apple failed: \(ServerError(error).message)")
        }
    }

    /// Heals every app of `configuration` from `moment`; a line per app.
    static func heal(_ configuration: ServerConfiguration, since moment: Date) async throws -> String {
        let taken = ISO8601DateFormatter().string(from: moment)
        // One line per app says what came back; not a line per transaction recorded.
        var logger = Logger(label: "kakin.server")
        logger.logLevel = .warning
        return try await configuration.withReconciler(logger: logger) { reconciler in
            var lines: [String] = []
            for app in configuration.apps.map(\.bundleID) {
                do {
                    let report = try await reconciler.reconcile(bundleID: app, since: moment)
                    lines.append(
                        "healed \(app) from Apple since \(taken): \(report.notificationsRead) notifications read, "
                            + "\(report.notificationsNew) new, \(report.historiesRead) histories read, "
                            + "\(report.transactionsRecorded) transactions recorded, \(report.transactionsRevoked) revoked")
                } catch let error as ServerError where error.code == .notConfigured {
                    lines.append("\(app): \(error.message); nothing was asked of Apple for it")
                }
            }
            return lines.joined(separator: "\n")
        }
    }
}
