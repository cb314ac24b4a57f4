import Foundation
import KakinTestSupport
import Testing

@testable import KakinLedger

/// Several stores on one database, as several server replicas have: a SQLite file opened by
/// each store, or one PostgreSQL schema reached through a pool per store.
@Suite("Ledger: stores sharing one database")
struct LedgerSharingTests {
    /// The kinds where separate stores share a database.
    static var sharedKinds: [StoreKind] { StoreKind.allCases.filter { $0 != .memory } }

    /// `count` stores on one new database, migrated by the first; all shut down afterwards.
    private func withSharedStores(
        _ kind: StoreKind, count: Int, migrate: Bool = true, _ body: ([any LedgerStore]) async throws -> Void
    ) async throws {
        func run(_ open: () async throws -> any LedgerStore) async throws {
            var stores: [any LedgerStore] = []
            do {
                for _ in 0..<count { stores.append(try await open()) }
                if migrate { try await stores[0].migrate() }
                try await body(stores)
            } catch {
                for store in stores { try? await store.shutdown() }
                throw error
            }
            for store in stores { try await store.shutdown() }
        }
        switch kind {
        case .postgres:
            try await PostgresTestDatabase.withSchema { schema in
                try await run { try await openLedger(.postgres, schema: schema) }
            }
        case .memory, .file:
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("kakin-shared-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("ledger.sqlite").path
            try await run { try await openLedger(.file, path: path) }
        }
    }

    @Test("PostgreSQL cases run", .enabled(if: PostgresTestDatabase.url != nil, "\(PostgresTestDatabase.skipMessage)"))
    func postgresIsReachable() async throws {
        try await withLedgerStore(.postgres) { store in
            try await store.ping()
        }
    }

    @Test("stores starting together migrate once, without errors", arguments: sharedKinds)
    func migrateTogether(kind: StoreKind) async throws {
        try await withSharedStores(kind, count: 4, migrate: false) { stores in
            _ = try await concurrently(stores.count) { index in try await stores[index].migrate() }
            for store in stores { try await store.migrate() }
            _ = try await stores[1].record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(
                try await stores[3].customer(bundleID: Fixture.bundleID, appUserID: "alice").balances == ["coins": 100])
        }
    }

    @Test("duplicates and spends spread over stores: one grant, never below zero", arguments: sharedKinds)
    func duplicatesAndSpendsAcrossStores(kind: StoreKind) async throws {
        try await withSharedStores(kind, count: 3) { stores in
            let outcomes = try await concurrently(60) { index in
                try await stores[index % stores.count].record(
                    Fixture.transaction("t\(index % 3)", user: "alice"), grants: Fixture.coins)
            }
            #expect(outcomes.filter { $0 == .recorded }.count == 3)
            let spends = try await concurrently(400) { index in
                try await stores[index % stores.count].spend(
                    bundleID: Fixture.bundleID, appUserID: "alice", currency: "coins", amount: 1,
                    idempotencyKey: "s\(index)", at: Fixture.at(100))
            }
            #expect(spends.filter { if case .spent = $0 { true } else { false } }.count == 300)
            let customer = try await stores[0].customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(customer.balances == ["coins": 0])
            try await expectLedgerMatchesBalances(stores[2], user: "alice")
        }
    }

    @Test("claimed events go to one claimer each, and all are claimed", arguments: sharedKinds)
    func claimsAreExclusive(kind: StoreKind) async throws {
        try await withSharedStores(kind, count: 3) { stores in
            for index in 0..<60 {
                _ = try await stores[0].record(Fixture.transaction("t\(index)", user: "alice"), grants: [])
            }
            let endpoint = "https://hooks.example/a"
            let batches = try await concurrently(12) { index in
                try await stores[index % stores.count].claimDueEvents(
                    endpoint: endpoint, now: Fixture.at(0), limit: 7, leaseUntil: Fixture.at(60))
            }
            let ids = batches.flatMap { $0.map(\.id) }
            #expect(ids.count == 60, "every event claimed")
            #expect(Set(ids).count == ids.count, "no event claimed twice")
            #expect(
                try await stores[1].claimDueEvents(
                    endpoint: endpoint, now: Fixture.at(59), limit: 100, leaseUntil: Fixture.at(120)
                ).isEmpty, "leased events are not due for anyone")
            #expect(
                try await stores[2].claimDueEvents(
                    endpoint: "https://hooks.example/b", now: Fixture.at(0), limit: 100, leaseUntil: Fixture.at(60)
                ).count == 60, "leases are per endpoint")
        }
    }

    @Test("a lease ends at delivery, or expires when its holder never reports", arguments: StoreKind.backends)
    func leasesEnd(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            for index in 0..<3 {
                _ = try await store.record(Fixture.transaction("t\(index)", user: "alice"), grants: [])
            }
            let endpoint = "https://hooks.example/a"
            let claimed = try await store.claimDueEvents(
                endpoint: endpoint, now: Fixture.at(0), limit: 10, leaseUntil: Fixture.at(300))
            #expect(claimed.count == 3)
            // Delivered: never due again. Failed with a retry time: due then, lease or not.
            try await store.markDelivery(
                eventID: claimed[0].id, endpoint: endpoint, delivered: true, at: Fixture.at(1), retryAt: nil)
            try await store.markDelivery(
                eventID: claimed[1].id, endpoint: endpoint, delivered: false, at: Fixture.at(1),
                retryAt: Fixture.at(10))
            let retried = try await store.claimDueEvents(
                endpoint: endpoint, now: Fixture.at(10), limit: 10, leaseUntil: Fixture.at(310))
            #expect(retried.map(\.id) == [claimed[1].id])
            // The third was never reported: its holder died. After the lease, anyone may take it.
            #expect(
                try await store.claimDueEvents(
                    endpoint: endpoint, now: Fixture.at(299), limit: 10, leaseUntil: Fixture.at(400)
                ).isEmpty)
            let expired = try await store.claimDueEvents(
                endpoint: endpoint, now: Fixture.at(300), limit: 10, leaseUntil: Fixture.at(600))
            #expect(expired.map(\.id) == [claimed[2].id])
            #expect(try await store.undeliveredEventCount(endpoint: endpoint) == 2)
            await #expect(throws: LedgerStoreError(.invalidArgument)) {
                try await store.claimDueEvents(
                    endpoint: endpoint, now: Fixture.at(10), limit: 10, leaseUntil: Fixture.at(10))
            }
            #expect(
                try await store.claimDueEvents(
                    endpoint: endpoint, now: Fixture.at(10), limit: 0, leaseUntil: Fixture.at(20)
                ).isEmpty)
        }
    }

    @Test("an exclusive job runs on one store at a time, and not after it threw", arguments: sharedKinds)
    func exclusiveJobs(kind: StoreKind) async throws {
        try await withSharedStores(kind, count: 2) { stores in
            var second: String?
            let first = try await whileHoldingReconciliation(stores[0]) {
                second = try await stores[1].exclusively(.reconciliation) { "second" }
            }
            #expect(first == "first")
            if kind == .postgres {
                #expect(second == nil, "the other replica skips its turn while one reconciles")
            } else {
                #expect(second == "second", "a SQLite ledger has one server, which always runs its jobs")
            }
            #expect(try await stores[1].exclusively(.reconciliation) { "again" } == "again", "released afterwards")
            await #expect(throws: LedgerStoreError(.invalidArgument)) {
                try await stores[1].exclusively(.reconciliation) { throw LedgerStoreError(.invalidArgument) }
            }
            #expect(try await stores[0].exclusively(.reconciliation) { "again" } == "again", "released after a throw")
        }
    }

    @Test(
        "ledgers in two schemas of one PostgreSQL database do not take turns with each other",
        .enabled(if: PostgresTestDatabase.url != nil, "\(PostgresTestDatabase.skipMessage)"))
    func schemasDoNotShareTurns() async throws {
        try await PostgresTestDatabase.withSchema { first in
            try await PostgresTestDatabase.withSchema { second in
                try await withMigratedStore(openLedger(.postgres, schema: first)) { holding in
                    try await withMigratedStore(openLedger(.postgres, schema: second)) { other in
                        let first = try await whileHoldingReconciliation(holding) { () async throws in
                            #expect(try await other.exclusively(.reconciliation) { "second" } == "second")
                            // The metrics job's step takes its lock in each schema too.
                            #expect(try await other.updateMetrics(limit: 10) == 0)
                        }
                        #expect(first == "first")
                    }
                }
            }
        }
    }

    @Test(
        "an unreachable PostgreSQL is reported as unavailable",
        .enabled(if: PostgresTestDatabase.url != nil, "\(PostgresTestDatabase.skipMessage)"))
    func unreachable() async throws {
        var options = try PostgresConnectionOptions(url: "postgres://kakin@127.0.0.1:1/kakin?sslmode=disable")
        options.maxConnections = 1
        options.connectionWait = .milliseconds(300)
        let store = try PostgresLedger(options: options)
        await #expect(throws: LedgerStoreError(.unavailable)) { try await store.transaction(id: "t1") }
        try await store.shutdown()
    }

    /// Runs `body` while `store` holds the reconciliation turn (in a task of its own, until `body`
    /// is done); what the holder's job answered.
    private func whileHoldingReconciliation(
        _ store: any LedgerStore, _ body: () async throws -> Void
    ) async throws -> String? {
        let (started, startedSignal) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await store.exclusively(.reconciliation) {
                startedSignal.yield()
                for await _ in release { break }
                return "first"
            }
        }
        for await _ in started { break }
        do { try await body() } catch {
            releaseSignal.yield()
            _ = try? await holder.value
            throw error
        }
        releaseSignal.yield()
        return try await holder.value
    }
}

@Suite("PostgreSQL connection options")
struct PostgresConnectionOptionsTests {
    @Test func readsTheURL() throws {
        let options = try PostgresConnectionOptions(
            url:
                "postgres://kakin:p%40ss@db.internal:6432/ledger?sslmode=verify-full&sslrootcert=/etc/ca.pem&pool_max_conns=25"
        )
        #expect(options.host == "db.internal")
        #expect(options.port == 6432)
        #expect(options.username == "kakin")
        #expect(options.password == "p@ss")
        #expect(options.database == "ledger")
        #expect(options.tls == .require)
        #expect(options.caFile == "/etc/ca.pem")
        #expect(options.maxConnections == 25)
        #expect(options.writers == 1, "one writer unless the URL asks for more")
        let plain = try PostgresConnectionOptions(url: "postgresql://app@127.0.0.1/kakin")
        #expect(plain.port == 5432 && plain.tls == .prefer && plain.maxConnections == 10 && plain.password == nil)
        #expect(plain.writers == 1)
        let chosen = try PostgresConnectionOptions(url: "postgres://app@db/kakin?pool_max_conns=6&writers=2")
        #expect(chosen.writers == 2)
        #expect(plain.endpoints == [.init(host: "127.0.0.1", port: 5432)])
    }

    @Test("a URL may name a primary and its standbys, libpq's way")
    func severalHosts() throws {
        let options = try PostgresConnectionOptions(
            url: "postgres://kakin:s%40cret@db-a:5433,db-b,10.0.0.7:6000/ledger?sslmode=disable")
        #expect(options.host == "db-a" && options.port == 5433 && options.password == "s@cret")
        #expect(options.database == "ledger" && options.tls == .disable)
        #expect(
            options.endpoints == [
                .init(host: "db-a", port: 5433), .init(host: "db-b", port: 5432), .init(host: "10.0.0.7", port: 6000),
            ])
    }

    @Test(arguments: [
        "mysql://kakin@db/ledger", "postgres:///ledger", "postgres://db/ledger", "postgres://kakin@db/x?sslmode=maybe",
        "postgres://kakin@db/x?pool_max_conns=0", "postgres://kakin@db/x?colour=blue", "postgres://kakin@db/x?writers=0",
        "postgres://kakin@db-a,/x", "postgres://kakin@db-a,db-b:0/x", "postgres://kakin@db-a,db-b:x/x",
        "postgres://kakin@db-a,db-b:1:2/x",
    ])
    func refusesBadURLs(url: String) {
        #expect(throws: LedgerStoreError.self) { try PostgresConnectionOptions(url: url) }
    }

    @Test func aMissingCAFileIsNamed() throws {
        var options = try PostgresConnectionOptions(url: "postgres://kakin@db/x?sslmode=require")
        options.caFile = "/nonexistent/ca.pem"
        #expect(throws: LedgerStoreError.self) { try options.clientTLS() }
        options.caFile = nil
        _ = try options.clientTLS()
    }
}
