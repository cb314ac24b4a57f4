import Foundation
import GRDB
import KakinTestSupport
import Testing

@testable import KakinLedger

/// What the SQLite engine itself promises, beyond the ledger's contract: durable commits, the
/// upgrade of a database the earlier engine made, writes committed in groups, a bounded log.
@Suite("SQLite ledger engine")
struct SQLiteLedgerTests {
    /// Runs `body` with the path of a ledger file in a directory of its own, removed afterwards.
    private func withFile(_ body: (String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kakin-sqlite-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory.appendingPathComponent("ledger.sqlite").path)
    }

    /// SQLite's plan of `statement` on `store`, its steps joined by "; ".
    private func plan(_ statement: LedgerSQL, on store: SQLiteLedger) async throws -> String {
        let explained: LedgerSQL = "EXPLAIN QUERY PLAN \(statement)"
        return try await store.writer.read { db in
            try db.rows(explained).map { row -> String in row["detail"] }.joined(separator: "; ")
        }
    }

    @Test("a file is in WAL mode and its writer flushes every commit")
    func durability() async throws {
        try await withFile { path in
            let store = try SQLiteLedger(path: path)
            try await withMigratedStore(store) { _ in
                let (mode, synchronous, limit, cache) =
                    try await store.writes.submit(.run { db in
                        (
                            try String.fetchOne(db, sql: "PRAGMA journal_mode"),
                            try Int.fetchOne(db, sql: "PRAGMA synchronous"),
                            try Int.fetchOne(db, sql: "PRAGMA journal_size_limit"),
                            try Int.fetchOne(db, sql: "PRAGMA cache_size")
                        )
                    }) as! (String?, Int?, Int?, Int?)
                #expect(mode == "wal")
                #expect(synchronous == 2, "FULL")
                #expect(limit == SQLiteLedger.journalSizeLimit)
                #expect(cache == -SQLiteLedger.writerCacheKiB)
                let readerMode = try await store.writer.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode")
                }
                #expect(readerMode == "wal")
            }
        }
    }

    @Test("a database the earlier engine made keeps its migrations and gets the new ones")
    func migrationBridge() async throws {
        try await withFile { path in
            // The earlier engine's layout: applied IDs in `migrations`, no `grdb_migrations`.
            let applied = LedgerSchema.migrations.prefix(5)
            let old = try DatabaseQueue(path: path)
            try await old.write { db in
                try db.execute(sql: "CREATE TABLE migrations (id TEXT PRIMARY KEY)")
                for migration in applied {
                    for statement in migration.statements(.sqlite) { try db.execute(sql: statement) }
                    try db.execute(sql: "INSERT INTO migrations (id) VALUES (?)", arguments: [migration.id])
                }
                try db.execute(
                    sql: """
                        INSERT INTO notifications
                            (notification_uuid, type, subtype, bundle_id, transaction_id, signed_payload, received_at)
                        VALUES ('n-1', 'TEST', NULL, ?, NULL, 'payload', 0)
                        """, arguments: [Fixture.bundleID])
            }
            try old.close()

            let store = try SQLiteLedger(path: path)
            try await withMigratedStore(store) { store in
                let ledger = try #require(store as? SQLiteLedger)
                let identifiers = try await ledger.writer.read { db in
                    try String.fetchSet(db, sql: "SELECT identifier FROM grdb_migrations")
                }
                #expect(identifiers == Set(LedgerSchema.migrations.map(\.id)))
                // The old rows are there, and the tables of the later migrations work.
                let received = try await store.receivedNotifications(bundleID: nil, appUserID: nil, limit: 10)
                #expect(received.map(\.notificationUUID) == ["n-1"])
                let outcome = try await store.record(Fixture.transaction("t-1", user: "alice"), grants: Fixture.coins)
                #expect(outcome == .recorded)
                try await store.migrate()
            }
        }
    }

    @Test(
        "writes waiting together commit together; one that fails is undone alone", arguments: [StoreKind.memory, .file])
    func groupWithAFailure(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let ledger = try #require(store as? SQLiteLedger)
            @Sendable func signature(_ nonce: String) -> OfferSignatureRecord {
                OfferSignatureRecord(
                    nonce: nonce, bundleID: Fixture.bundleID, appUserID: "alice", productID: "monthly",
                    offerID: "offer", kind: .promotional, keyID: "KEY", createdAt: Fixture.at(0))
            }
            try await store.recordOfferSignature(signature("taken"))
            let waiting = 5
            // Holds the writer until every write of the group waits, so that they form one group.
            let (started, signal) = AsyncStream.makeStream(of: Void.self)
            let gate = Task {
                try await ledger.writes.submit(.run { _ in
                    signal.yield()
                    while ledger.writes.waitingCount < waiting {}
                    return 0
                })
            }
            for await _ in started { break }
            let outcomes = try await concurrently(waiting) { index -> Bool in
                do {
                    try await store.recordOfferSignature(signature(index == 2 ? "taken" : "nonce-\(index)"))
                    return true
                } catch let error as LedgerStoreError {
                    #expect(error.code == .invalidArgument)
                    return false
                }
            }
            _ = try await gate.value
            #expect(outcomes.filter { $0 }.count == waiting - 1)
            let stored = try await store.offerSignatures(bundleID: Fixture.bundleID, limit: 100)
            #expect(Set(stored.map(\.nonce)) == Set(["taken"] + (0..<waiting).filter { $0 != 2 }.map { "nonce-\($0)" }))
        }
    }

    @Test("the write-ahead log stays bounded however much is written")
    func boundedLog() async throws {
        try await withFile { path in
            let store = try SQLiteLedger(path: path)
            try await withMigratedStore(store) { store in
                let bytes = String(repeating: "x", count: 24 * 1024)
                let count = 400
                // About 10 MB of signed transactions, more than the log may keep.
                _ = try await concurrently(count) { index in
                    var transaction = Fixture.transaction("t-\(index)", user: "user-\(index % 20)")
                    transaction.signedTransaction = "jws.\(index).\(bytes)"
                    return try await store.record(transaction, grants: Fixture.coins)
                }
                for index in 0..<count {
                    #expect(try await store.transaction(id: "t-\(index)") != nil)
                }
                let log = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
                #expect(log > 0)
                #expect(log <= SQLiteLedger.journalSizeLimit)
            }
        }
    }

    @Test("checkpoints run on their own connection after the writer's commits")
    func checkpointsBesideTheWriter() async throws {
        try await withFile { path in
            let store = try SQLiteLedger(path: path)
            try await withMigratedStore(store) { _ in
                let checkpoints = try #require(store.checkpoints)
                // Migrating may have written (a pass over the rows held) and checkpointed already.
                let migrated = checkpoints.completed
                for index in 0..<20 {
                    let outcome = try await store.record(
                        Fixture.transaction("t-\(index)", user: "user-\(index % 3)"), grants: Fixture.coins)
                    #expect(outcome == .recorded)
                }
                // The loop runs once the commits told it to; it is not awaited by the writes.
                let deadline = ContinuousClock.now + .seconds(60)
                while checkpoints.completed == migrated, ContinuousClock.now < deadline { await Task.yield() }
                #expect(checkpoints.completed > migrated)
                // With no reader in the way, a checkpoint copies the whole log into the file.
                let (log, copied) = try await checkpoints.checkpointNow()
                #expect(copied == log)
                for index in 0..<20 { #expect(try await store.transaction(id: "t-\(index)") != nil) }
            }
            // What was written is in the file once the ledger is closed and opened again.
            let reopened = try SQLiteLedger(path: path)
            try await withMigratedStore(reopened) { store in
                let found = try await store.transaction(id: "t-19")
                #expect(found?.transactionID == "t-19")
            }
        }
    }

    @Test("a duplicate's lookup reads only an index; a summary reads the transactions that grant access only")
    func summaryReadsIndexes() async throws {
        try await withFile { path in
            let store = try SQLiteLedger(path: path)
            try await withMigratedStore(store) { _ in
                func plan(_ sql: String, _ arguments: StatementArguments) async throws -> String {
                    try await store.writer.read { db in
                        try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN \(sql)", arguments: arguments)
                            .map { row -> String in row["detail"] }.joined(separator: "; ")
                    }
                }
                let known = try await plan(SQLiteLedger.signedPart, [Data(count: 32)])
                #expect(known.contains("COVERING INDEX transactions_owner_by_signed_digest"), "\(known)")
                // The lookup with its owner's summary, in one statement: every part through an index.
                let withSummary = try await plan(SQLiteLedger.knownDigest, [Data(count: 32)])
                #expect(withSummary.contains("COVERING INDEX transactions_owner_by_signed_digest"), "\(withSummary)")
                #expect(withSummary.contains("INDEX transactions_granting_access"), "\(withSummary)")
                // A scan of a table: not of the one row found, the count's row, or the newest few read by their index.
                func tableScans(_ plan: String) -> [String] {
                    plan.components(separatedBy: "; ").filter {
                        $0.hasPrefix("SCAN") && !["SCAN found", "SCAN CONSTANT ROW", "SCAN recent"].contains($0)
                    }
                }
                #expect(tableScans(withSummary).isEmpty, "\(withSummary)")
                #expect(!withSummary.contains("TEMP B-TREE"), "\(withSummary)")
                for query in [SQLiteLedger.summaries.withJWS, SQLiteLedger.summaries.withoutJWS] {
                    let summary = try await plan(query, [Fixture.bundleID, "alice", 5])
                    #expect(summary.contains("INDEX transactions_granting_access"), "\(summary)")
                    #expect(tableScans(summary).isEmpty, "\(summary)")
                    #expect(!summary.contains("TEMP B-TREE"), "\(summary)")
                }
            }
        }
    }

    @Test("a summary read while purchases are recorded sees each of them whole: its count and balance agree")
    func summaryReadsOneSnapshot() async throws {
        try await withFile { path in
            let store = try SQLiteLedger(path: path)
            try await withMigratedStore(store) { store in
                _ = try await store.record(Fixture.transaction("c0", user: "alice"), grants: Fixture.coins)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for index in 1...150 {
                            _ = try await store.record(
                                Fixture.transaction("c\(index)", user: "alice"), grants: Fixture.coins)
                        }
                    }
                    group.addTask {
                        for _ in 0..<300 {
                            let read = try await store.customerSummary(
                                bundleID: Fixture.bundleID, appUserID: "alice", recent: 2, withJWS: false)
                            let looked = try #require(
                                try await store.signedTransactionAndSummary(digest: SignedDigest("jws.c0")))
                            for summary in [read, try #require(looked.summary)] {
                                #expect(summary.balances["coins", default: 0] == 100 * Int64(summary.transactionCount))
                            }
                            #expect(read.recentTransactions.count == min(2, read.transactionCount))
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    @Test("an app's customer search and its newest deliveries walk an index in order, without sorting the app's rows")
    func appListsWalkInOrder() async throws {
        try await withFile { path in
            let store = try SQLiteLedger(path: path)
            try await withMigratedStore(store) { _ in
                for bundleID in [Fixture.bundleID, nil] {
                    let search = try await plan(
                        CustomerSearch.byPrefix("load-12", bundleID: bundleID, limit: 50), on: store)
                    #expect(search.contains("INDEX transactions_by_user_prefix"), "\(search)")
                    #expect(!search.contains("TEMP B-TREE"), "\(search)")
                    let deliveries = try await plan(
                        ActivityStatements.deliveries(bundleID: bundleID, appUserID: nil, limit: 100), on: store)
                    #expect(deliveries.hasPrefix("SCAN e"), "\(deliveries)")
                    #expect(!deliveries.contains("TEMP B-TREE"), "\(deliveries)")
                }
                let customer = try await plan(
                    ActivityStatements.deliveries(bundleID: Fixture.bundleID, appUserID: "alice", limit: 100), on: store)
                #expect(customer.contains("INDEX events_by_customer"), "\(customer)")
                #expect(!customer.contains("TEMP B-TREE"), "\(customer)")
            }
        }
    }

    @Test("an app's newest retention decisions walk their index in order, each subscription by its own transactions")
    func retentionDecisionsWalkTheirIndex() async throws {
        try await withFile { path in
            let store = try SQLiteLedger(path: path)
            try await withMigratedStore(store) { _ in
                let filter: LedgerSQL = "d.bundle_id = \(Fixture.bundleID) AND d.environment = 'Sandbox'"
                let decisions = try await plan(
                    RetentionStatements.decisions(filter, limit: 50, now: Fixture.at(0)), on: store)
                #expect(decisions.contains("INDEX retention_decisions_by_app"), "\(decisions)")
                #expect(decisions.contains("INDEX transactions_by_original"), "\(decisions)")
                #expect(!decisions.contains("TEMP B-TREE"), "\(decisions)")
            }
        }
    }

    @Test("an app's Stripe events to apply walk their partial index in order, and its newest is one probe")
    func stripeEventsWalkTheirIndexes() async throws {
        try await withFile { path in
            let store = try SQLiteLedger(path: path)
            try await withMigratedStore(store) { _ in
                let after = StripeEventRecord(
                    bundleID: Fixture.bundleID, eventID: "evt_1", type: "invoice.paid", objectID: nil, livemode: false,
                    createdAt: Fixture.at(10), receivedAt: Fixture.at(11), payload: "{}")
                for cursor in [nil, after] {
                    let toApply = try await plan(
                        StripeEventStatements.toApply(bundleID: Fixture.bundleID, after: cursor, limit: 50), on: store)
                    #expect(toApply.contains("INDEX stripe_events_to_apply"), "\(toApply)")
                    #expect(!toApply.contains("TEMP B-TREE"), "\(toApply)")
                }
                let newest = try await plan(StripeEventStatements.newest(bundleID: Fixture.bundleID), on: store)
                #expect(newest.contains("INDEX stripe_events_by_created"), "\(newest)")
            }
        }
    }
}
