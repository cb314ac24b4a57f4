import Foundation
import KakinLedger
import KakinTestSupport
import Testing

/// `kakin server backup` and `kakin server restore`, run as an operator would, under the usual
/// umask 022: what they write is their owner's only.
@Suite struct ServerBackupCommandTests {
    /// Runs `kakin` with `arguments` under umask 022 (through `/bin/sh`) and waits for it to end.
    static func kakinUnderUmask022(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        guard let binary = BinaryTests.binary else { throw CancellationError() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "umask 022; exec \"$0\" \"$@\"", binary.path] + arguments
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require((attributes[.posixPermissions] as? NSNumber)?.intValue)
    }

    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func backupAndRestoreWriteOwnerOnlyFilesUnderUmask022() async throws {
        let scratch = try ScratchDirectory()
        let ledger = scratch.path("ledger.sqlite")
        let store = try SQLiteLedger(path: ledger)
        try await store.migrate()
        _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
        try await store.shutdown()
        let config = try scratch.write(
            """
            {"database": "sqlite:\(ledger)", "serverKey": "\(scratch.path("server-key.pem"))",
             "keys": {"publishable": "pk_backup", "secret": "sk_backup_0123456789"},
             "apps": [{"bundleId": "\(Fixture.bundleID)", "environments": ["Sandbox"]}]}
            """, to: "server.json")

        let backup = scratch.path("backups/nightly")
        let backedUp = try Self.kakinUnderUmask022(["server", "backup", "--config", config, "--to", backup])
        #expect(backedUp.status == 0, "\(backedUp.error)")
        #expect(backedUp.output.contains("1 transactions"), "\(backedUp.output)")
        #expect(try Self.mode(scratch.path("backups")) == 0o700)
        #expect(try Self.mode(backup) == 0o700)
        #expect(try Self.mode(backup + "/ledger.sqlite") == 0o600)
        #expect(try Self.mode(backup + "/manifest.json") == 0o600)

        // The ledger is lost; the restore makes it again, owner-only.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: ledger + suffix) }
        let restored = try Self.kakinUnderUmask022(
            ["server", "restore", "--config", config, "--from", backup, "--no-heal"])
        #expect(restored.status == 0, "\(restored.error)")
        #expect(try Self.mode(ledger) == 0o600)
        let reopened = try SQLiteLedger(path: ledger)
        try await reopened.migrate()
        #expect(try await reopened.transaction(id: "t1") != nil)
        try await reopened.shutdown()
    }
}
