import Foundation
import GRDB
import KakinCore
import KakinTestSupport
import Testing

@testable import KakinLedger

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A SQLite ledger, its log and shared-memory files, backups and restores are their owner's only,
/// whatever the umask; a ledger found readable by others is reported.
@Suite("SQLite ledger files are owner-only", .serialized)
struct LedgerFilePermissionTests {
    /// Runs `body` with the process's umask set to `mask` (the usual 022, under which SQLite alone
    /// would create 0644 files), restored afterwards.
    static func withUmask<R>(_ mask: mode_t, _ body: () async throws -> R) async rethrows -> R {
        let previous = umask(mask)
        defer { umask(previous) }
        return try await body()
    }

    /// The permission bits of the file or folder at `path`.
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require((attributes[.posixPermissions] as? NSNumber)?.intValue)
    }

    /// Runs `body` in a new folder, removed afterwards.
    static func withDirectory(_ body: (URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kakin-modes-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory)
    }

    @Test("under umask 022 a new ledger and its -wal and -shm files are 0600, and no warning is given")
    func newLedgerIsOwnerOnly() async throws {
        try await Self.withDirectory { directory in
            let path = directory.appendingPathComponent("ledger.sqlite").path
            let store = try await Self.withUmask(0o022) {
                let store = try SQLiteLedger(path: path)
                try await store.migrate()
                _ = try await store.record(Fixture.transaction("1", user: "alice"), grants: Fixture.coins)
                return store
            }
            // Both exist while the ledger is open in WAL mode.
            for file in [path, path + "-wal", path + "-shm"] {
                #expect(FileManager.default.fileExists(atPath: file), "\(file) exists")
                #expect(try Self.mode(file) == 0o600, "\(file)")
            }
            #expect(SQLiteLedger.permissionWarning(path: path) == nil)
            try await store.shutdown()
        }
    }

    @Test("a ledger, or its log, readable by others is reported with the files and how to narrow them")
    func looseLedgerIsReported() async throws {
        try await Self.withDirectory { directory in
            let path = directory.appendingPathComponent("ledger.sqlite").path
            #expect(SQLiteLedger.permissionWarning(path: path) == nil, "no file, nothing to report")
            let store = try SQLiteLedger(path: path)
            try await store.migrate()
            #expect(SQLiteLedger.permissionWarning(path: path) == nil)
            #expect(chmod(path + "-wal", 0o640) == 0)
            let walOnly = try #require(SQLiteLedger.permissionWarning(path: path))
            #expect(walOnly.contains("\(path)-wal (mode 640)") && !walOnly.contains("\(path) (mode"))
            #expect(chmod(path, 0o604) == 0)
            let both = try #require(SQLiteLedger.permissionWarning(path: path))
            #expect(both.contains("\(path) (mode 604)") && both.contains("chmod 600"))
            try await store.shutdown()
        }
    }

    @Test("under umask 022 a backup's folders are 0700 and its ledger and manifest 0600; a restore writes 0600")
    func backupAndRestoreAreOwnerOnly() async throws {
        try await Self.withDirectory { directory in
            let path = directory.appendingPathComponent("ledger.sqlite").path
            let store = try SQLiteLedger(path: path)
            try await store.migrate()
            _ = try await store.record(Fixture.transaction("1", user: "alice"), grants: Fixture.coins)
            try await store.shutdown()

            try await Self.withUmask(0o022) {
                // Two folders made by the backup, the outer one included.
                let backups = directory.appendingPathComponent("backups")
                let backup = backups.appendingPathComponent("first")
                try SQLiteBackup.backup(ledgerAt: path, to: backup)
                #expect(try Self.mode(backups.path) == 0o700)
                #expect(try Self.mode(backup.path) == 0o700)
                #expect(try Self.mode(backup.appendingPathComponent(SQLiteBackup.ledgerFile).path) == 0o600)
                #expect(try Self.mode(backup.appendingPathComponent(SQLiteBackup.manifestFile).path) == 0o600)
                #expect(
                    try FileManager.default.contentsOfDirectory(atPath: backup.path).sorted()
                        == [SQLiteBackup.ledgerFile, SQLiteBackup.manifestFile])

                // An empty folder made beforehand, open to all, becomes the owner's.
                let given = directory.appendingPathComponent("given")
                try FileManager.default.createDirectory(
                    at: given, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
                #expect(try Self.mode(given.path) == 0o755)
                try SQLiteBackup.backup(ledgerAt: path, to: given)
                #expect(try Self.mode(given.path) == 0o700)

                // A restore onto a lost ledger creates it 0600; onto one open to all, narrows it.
                let lost = directory.appendingPathComponent("lost.sqlite").path
                try SQLiteBackup.restore(from: backup, toLedgerAt: lost)
                #expect(try Self.mode(lost) == 0o600)
                #expect(chmod(path, 0o644) == 0)
                try SQLiteBackup.restore(from: backup, toLedgerAt: path)
                #expect(try Self.mode(path) == 0o600)
                #expect(SQLiteLedger.permissionWarning(path: path) == nil)
            }
            let restored = try SQLiteLedger(path: path)
            try await restored.migrate()
            #expect(try await restored.transaction(id: "1") != nil)
            try await restored.shutdown()
        }
    }

    @Test("folders are made 0700 under umask 022, each missing one above too; existing ones are left as they are")
    func directoriesAreOwnerOnly() async throws {
        try await Self.withDirectory { directory in
            #expect(chmod(directory.path, 0o755) == 0)
            let deep = directory.appendingPathComponent("a/b/c")
            try await Self.withUmask(0o022) {
                try OwnerOnlyFiles.createDirectory(at: deep)
                try OwnerOnlyFiles.createDirectory(at: deep)
            }
            for folder in ["a", "a/b", "a/b/c"] {
                #expect(try Self.mode(directory.appendingPathComponent(folder).path) == 0o700, "\(folder)")
            }
            #expect(try Self.mode(directory.path) == 0o755)
        }
    }
}
