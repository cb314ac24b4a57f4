import Foundation
import SQLKit
import Testing

@testable import KakinServer
@testable import KakinLedger

@Suite("SQLite write-ahead log")
struct SQLiteCheckpointTests {
    @Test("the log is copied back beside the writer and starts over, so it stays bounded while everything is kept")
    func logStaysBounded() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kakin-wal-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ledger.sqlite").path
        // SQLite's own checkpoint size, so a few thousand rows go past the limits.
        let limits = SQLiteLedgerEngine.LogLimits(checkpointPages: 1_000, restartPages: 4_000, stepPages: 250)
        let store = try await SQLLedgerStore.sqlite(path: path, logLimits: limits)
        try await store.migrate()

        // About 6 KB per row, as a signed transaction with its certificate chain: 8,000 rows
        // write well over the log size at which the writer lets the log start over.
        let padding = String(repeating: "x", count: 6_000)
        let rows = 8_000
        let written = rows * padding.utf8.count
        #expect(written > limits.restartPages * 4096 * 2)
        _ = try await concurrently(32) { worker in
            for index in stride(from: worker, to: rows, by: 32) {
                var transaction = Fixture.transaction("t\(index)", user: "user-\(index % 50)")
                transaction.signedTransaction = "\(index).\(padding)"
                _ = try await store.record(transaction, grants: Fixture.coins)
            }
        }
        let logSize = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
        #expect(logSize > 0)
        #expect(logSize < written / 2, "the log kept \(logSize) bytes of \(written) written")
        try await store.shutdown()

        let reopened = try await SQLLedgerStore.sqlite(path: path)
        let count = try await reopened.reading { db in
            try await db.raw("SELECT COUNT(*) AS n FROM transactions").first()?.decode(column: "n", as: Int.self)
        }
        #expect(count == rows)
        #expect(
            try await reopened.customer(bundleID: Fixture.bundleID, appUserID: "user-7").balances == ["coins": 16_000])
        try await reopened.shutdown()
    }
}
