import Foundation
import GRDB
import KakinTestSupport
import Logging
import Testing

@testable import KakinLedger
@testable import KakinServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Online backups of a SQLite ledger, their restore, and the heal from Apple after a restore.
@Suite("Operations: backups and restore")
struct BackupTests {
    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("kakin-backup-\(UUID().uuidString)")
    }

    /// Buys `product` in the sandbox and uploads it as `user`; returns its transaction ID.
    static func upload(_ fixture: ServerFixture, _ product: String, user: String = "user-1") async throws -> String {
        let (transaction, jws) = try await fixture.buy(product)
        _ = try await fixture.service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: user)
        return transaction.id
    }

    static func transactionIDs(inLedgerAt path: String) throws -> Set<String> {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        return Set(try queue.read { try String.fetchAll($0, sql: "SELECT transaction_id FROM transactions") })
    }

    @Test("a backup taken while purchases are written holds every one acknowledged before it, whole and consistent")
    func backupWhileWriting() async throws {
        let root = Self.directory()
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let path = root.appendingPathComponent("ledger.sqlite").path
        let fixture = try await ServerFixture(path: path)
        var before: Set<String> = []
        for _ in 0..<20 { before.insert(try await Self.upload(fixture, "increasePoints")) }

        // Purchases go on being written while the copy is taken.
        let writer = Task { for _ in 0..<30 { _ = try await Self.upload(fixture, "increasePoints") } }
        let backup = root.appendingPathComponent("backup")
        let manifest = try SQLiteBackup.backup(ledgerAt: path, to: backup, now: fixture.clock.now())
        try await writer.value

        let copied = try Self.transactionIDs(inLedgerAt: backup.appendingPathComponent(SQLiteBackup.ledgerFile).path)
        #expect(before.isSubset(of: copied), "every purchase acknowledged before the backup is in it")
        #expect(Int64(copied.count) == manifest.transactions && copied.count <= 50)
        #expect(manifest.schemaVersion == LedgerSchema.migrations.last?.id && manifest.takenAt == fixture.clock.now())
        #expect(manifest.lastEventID != nil)
        #expect(try SQLiteBackup.manifest(of: backup) == manifest)
        let check = try DatabaseQueue(path: backup.appendingPathComponent(SQLiteBackup.ledgerFile).path)
        #expect(try await check.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
        try check.close()

        // A backup never goes over another one.
        #expect(throws: LedgerStoreError(.invalidArgument)) {
            try SQLiteBackup.backup(ledgerAt: path, to: backup)
        }
        try await fixture.store.shutdown()
    }

    /// The permission bits of the file or folder at `path`.
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require((attributes[.posixPermissions] as? NSNumber)?.intValue)
    }

    @Test("under umask 022 a server's ledger, its log and a backup are owner-only; one open to others is warned of")
    func filesAreOwnerOnly() async throws {
        let root = Self.directory()
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let path = root.appendingPathComponent("ledger.sqlite").path
        var configuration = ServerConfiguration(
            database: "sqlite:" + path, serverKeyPath: root.appendingPathComponent("server-key.pem").path,
            keys: .init(publishable: "pk_files", secret: "sk_files_0123456789"),
            apps: [ServerConfiguration.App(bundleID: ServerFixture.bundleID)])
        configuration.listen = .init(host: "127.0.0.1", port: 0)
        let logs = RecordedLogs()
        let logger = Logger(label: "kakin.server") { _ in RecordedLogHandler(logs: logs) }

        let previous = umask(0o022)
        defer { umask(previous) }
        let store = try await ServerParts.openStore(configuration, logger: logger)
        let inMemory = try await ServerFixture()
        try await inMemory.store.shutdown()
        let fixture = try await inMemory.restarted(on: store)
        _ = try await Self.upload(fixture, "increasePoints")
        for file in [path, path + "-wal", path + "-shm"] { #expect(try Self.mode(file) == 0o600, "\(file)") }
        #expect(logs.lines.withLock { $0.filter { $0.hasPrefix("warning") } }.isEmpty)

        let backup = root.appendingPathComponent("backups/today")
        try SQLiteBackup.backup(ledgerAt: path, to: backup, now: fixture.clock.now())
        #expect(try Self.mode(root.appendingPathComponent("backups").path) == 0o700)
        #expect(try Self.mode(backup.path) == 0o700)
        for file in [SQLiteBackup.ledgerFile, SQLiteBackup.manifestFile] {
            #expect(try Self.mode(backup.appendingPathComponent(file).path) == 0o600, "\(file)")
        }
        try await fixture.store.shutdown()

        // A ledger made readable by others (copied, or made by an older version) is reported at start.
        #expect(chmod(path, 0o644) == 0)
        let again = try await ServerParts.openStore(configuration, logger: logger)
        #expect(
            logs.contain(
                "warning the SQLite ledger is readable or writable by users other than its owner: \(path) (mode 644)"))
        try await again.shutdown()
    }

    @Test("a restore is refused while the ledger is open, and puts the backup in place once it is not")
    func restoreRefusesALedgerInUse() async throws {
        let root = Self.directory()
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let path = root.appendingPathComponent("ledger.sqlite").path
        let fixture = try await ServerFixture(path: path)
        let kept = try await Self.upload(fixture, "removeAd")
        let backup = root.appendingPathComponent("backup")
        let manifest = try SQLiteBackup.backup(ledgerAt: path, to: backup, now: fixture.clock.now())
        let lost = try await Self.upload(fixture, "increasePoints")

        #expect(throws: LedgerStoreError(.inUse)) { try SQLiteBackup.restore(from: backup, toLedgerAt: path) }
        #expect(try Self.transactionIDs(inLedgerAt: path).contains(lost), "a refused restore changes nothing")
        try await fixture.store.shutdown()

        #expect(try SQLiteBackup.restore(from: backup, toLedgerAt: path) == manifest)
        #expect(try Self.transactionIDs(inLedgerAt: path) == [kept])
        // Onto a disk that lost the ledger: the file is made again.
        let elsewhere = root.appendingPathComponent("new.sqlite").path
        try SQLiteBackup.restore(from: backup, toLedgerAt: elsewhere)
        let reopened = try SQLiteLedger(path: elsewhere)
        try await reopened.migrate()
        #expect(try await reopened.transaction(id: kept) != nil)
        try await reopened.shutdown()

        // What is not a backup, or is one of a schema newer than this version, is refused.
        #expect(throws: LedgerStoreError(.invalidArgument)) { try SQLiteBackup.restore(from: root, toLedgerAt: path) }
        let newer = root.appendingPathComponent("newer")
        try FileManager.default.copyItem(at: backup, to: newer)
        let manifestURL = newer.appendingPathComponent(SQLiteBackup.manifestFile)
        let text = try String(contentsOf: manifestURL, encoding: .utf8)
            .replacingOccurrences(of: manifest.schemaVersion, with: "9999_future")
        try text.write(to: manifestURL, atomically: true, encoding: .utf8)
        #expect(throws: LedgerStoreError(.invalidArgument)) { try SQLiteBackup.restore(from: newer, toLedgerAt: path) }
    }

    @Test("after a restore, the heal asks Apple for what happened since the backup and records it once")
    func healAfterRestore() async throws {
        let root = Self.directory()
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let path = root.appendingPathComponent("ledger.sqlite").path
        let fixture = try await ServerFixture(path: path)
        let first = try await Self.upload(fixture, "removeAd")
        fixture.clock.advance(by: 600)
        let backup = root.appendingPathComponent("backup")
        let manifest = try SQLiteBackup.backup(ledgerAt: path, to: backup, now: fixture.clock.now())

        // Acknowledged after the backup: another customer's subscription and points; then the
        // subscription renews. Apple's notifications of all of it reach no server.
        fixture.clock.advance(by: 600)
        let (monthly, jws) = try await fixture.buy("premium.monthly", tester: "other")
        _ = try await fixture.service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-2")
        let (points, pointsJWS) = try await fixture.buy("increasePoints", tester: "other")
        let granted = try await fixture.service.submitTransaction(
            pointsJWS, bundleID: ServerFixture.bundleID, appUserID: "user-2"
        ).balances
        #expect(!granted.isEmpty)
        fixture.clock.advance(by: 35 * 86_400)
        try await fixture.engine.processRenewals()
        let sent = try await fixture.engine.deliverDueNotifications(
            to: URL(string: "https://lost.example/apple")!, using: LostNotifications())
        #expect(
            Set(sent.map(\.notificationType.rawValue)) == ["ONE_TIME_CHARGE", "SUBSCRIBED", "DID_RENEW"] && sent.count == 4)
        fixture.clock.advance(by: 60)
        let acknowledged = try Self.transactionIDs(inLedgerAt: path)
        #expect(acknowledged.contains(monthly.id) && acknowledged.contains(first))
        try await fixture.store.shutdown()

        try SQLiteBackup.restore(from: backup, toLedgerAt: path)
        #expect(try Self.transactionIDs(inLedgerAt: path) == [first], "the restore lost what came after the backup")
        let restored = try await fixture.restarted(on: try SQLiteLedger(path: path))
        try await fixture.withServerAPI { access in
            let reconciler = Reconciler(service: restored.service, access: [ServerFixture.bundleID: access])
            let report = try await reconciler.reconcile(bundleID: ServerFixture.bundleID, since: manifest.takenAt)
            #expect(report.notificationsRead == 4 && report.notificationsNew == 4, "none had reached the server")
            #expect(report.transactionsRecorded == 0, "each notification carried its transaction")
            let again = try await reconciler.reconcile(bundleID: ServerFixture.bundleID, since: manifest.takenAt)
            #expect(again.transactionsRecorded == 0 && again.notificationsNew == 0, "healed once")
        }
        for id in [monthly.id, points.id] {
            #expect(try await restored.store.transaction(id: id) != nil, "the purchase came back from Apple")
        }
        let customer = try await restored.service.customer(bundleID: ServerFixture.bundleID, appUserID: "user-1")
        #expect(customer.transactions.map(\.transactionID) == [first])
        // The device that bought them sends them again: duplicates that tell the ledger whose they
        // are, and the points are granted once.
        for signed in [jws, pointsJWS] {
            let resent = try await restored.service.submit(signed, bundleID: ServerFixture.bundleID, appUserID: "user-2")
            #expect(!resent.isNew)
        }
        _ = try await restored.service.submit(pointsJWS, bundleID: ServerFixture.bundleID, appUserID: "user-2")
        let owner = try await restored.service.customer(bundleID: ServerFixture.bundleID, appUserID: "user-2")
        #expect(owner.balances == granted)
        #expect(Set(owner.transactions.map(\.transactionID)).isSuperset(of: [monthly.id, points.id]))
        #expect(try Self.transactionIDs(inLedgerAt: path).isSuperset(of: acknowledged))
        try await restored.store.shutdown()
    }
}

/// A full disk under the ledger, through SQLite's page limit (the same refusal as a full disk).
@Suite("Operations: a full disk")
struct DiskFullTests {
    @Test("a write refused for a full disk is a retryable 503 that keeps nothing; the next write after space returns succeeds")
    func fullDisk() async throws {
        let path = BackupTests.directory().path + ".sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let fixture = try await ServerFixture(path: path)
        let store = try #require(fixture.store as? SQLiteLedger)
        _ = try await BackupTests.upload(fixture, "increasePoints")
        let pages = try await store.writer.read { try Int.fetchOne($0, sql: "PRAGMA page_count") } ?? 0
        try await store.writer.writeWithoutTransaction { try $0.execute(sql: "PRAGMA max_page_count = \(pages)") }

        var refused = 0
        var kept: [String] = []
        for _ in 0..<200 {
            do { kept.append(try await BackupTests.upload(fixture, "increasePoints")) } catch {
                let failure = ServerError(error)
                #expect(failure.code == .storageUnavailable && failure.isRetryable && failure.cause == "diskFull")
                refused += 1
            }
        }
        #expect(refused > 0, "the page limit was reached")
        try await store.writer.writeWithoutTransaction { try $0.execute(sql: "PRAGMA max_page_count = 1073741823") }
        kept.append(try await BackupTests.upload(fixture, "increasePoints"))
        let stored = try BackupTests.transactionIDs(inLedgerAt: path)
        #expect(stored.isSuperset(of: kept) && stored.count == kept.count + 1, "what was refused is not kept")
        try await fixture.store.shutdown()
    }
}
