import Foundation
import PostgresNIO
import Synchronization
import KakinTestSupport
import Testing

@testable import KakinLedger

/// What the PostgreSQL engine does beyond the contract: failures it reports as unavailable,
/// transactions it runs again, migrations and advisory locks shared by several stores.
@Suite(.enabled(if: PostgresTestDatabase.url != nil, "\(PostgresTestDatabase.skipMessage)"))
struct PostgresLedgerTests {
    /// `count` stores on one new schema, shut down afterwards.
    /// The first store waits `connectionWait` for a connection (and its statements as long); the
    /// others a minute.
    private func withStores(
        _ count: Int, connectionWait: Duration = .seconds(60), _ body: ([PostgresLedger]) async throws -> Void
    ) async throws {
        try await PostgresTestDatabase.withSchema { schema in
            var options = try PostgresTestDatabase.options(schema: schema)
            var stores: [PostgresLedger] = []
            do {
                for index in 0..<count {
                    options.connectionWait = index == 0 ? connectionWait : .seconds(60)
                    stores.append(try PostgresLedger(options: options))
                }
                try await body(stores)
            } catch {
                for store in stores { try? await store.shutdown() }
                throw error
            }
            for store in stores { try await store.shutdown() }
        }
    }

    /// Runs `statement` in a transaction on one of `store`'s connections (with no statement
    /// timeout), holds that transaction open while `body` runs, then commits it.
    private func holdingTransaction(
        on store: PostgresLedger, after statement: PostgresQuery, _ body: () async throws -> Void
    ) async throws {
        let (started, startedSignal) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            defer { startedSignal.finish() }
            try await store.lease(limit: nil) { connection in
                try await connection.withTransaction(logger: PostgresLedger.quiet) { connection in
                    _ = try await connection.rows("SET LOCAL statement_timeout = 0")
                    _ = try await connection.rows(statement)
                    startedSignal.yield()
                    for await _ in release { break }
                }
            }
        }
        for await _ in started { break }
        do {
            try await body()
        } catch {
            releaseSignal.yield()
            _ = try? await holder.value
            throw error
        }
        releaseSignal.yield()
        try await holder.value
    }

    @Test("a server that cannot be reached is unavailable, within the connection wait")
    func unreachable() async throws {
        var options = try PostgresConnectionOptions(url: "postgres://kakin@127.0.0.1:1/kakin?sslmode=disable")
        options.connectionWait = .milliseconds(300)
        let store = try PostgresLedger(options: options)
        let start = ContinuousClock.now
        await #expect(throws: LedgerStoreError(.unavailable)) { try await store.transaction(id: "t1") }
        await #expect(throws: LedgerStoreError(.unavailable)) {
            try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
        }
        // Bounded, not hung (a loaded machine makes even refused connections slow to report).
        #expect(ContinuousClock.now - start < .seconds(60))
        try await store.shutdown()
    }

    @Test("of the hosts the URL names, the ledger writes to the one that answers as the primary")
    func findsThePrimary() async throws {
        try await PostgresTestDatabase.withSchema { schema in
            var options = try PostgresTestDatabase.options(schema: schema)
            // A host nobody listens on comes first; the cluster second.
            options.otherHosts = [.init(host: options.host, port: options.port)]
            (options.host, options.port) = ("127.0.0.1", 1)
            let store = try PostgresLedger(options: options)
            try await store.migrate()
            #expect(store.primary.endpoint == options.otherHosts[0])
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(try await store.transaction(id: "t1") != nil)
            // It stays there: the next look finds it still the primary.
            await store.primary.follow()
            #expect(store.primary.endpoint == options.otherHosts[0])
            try await store.shutdown()
        }
    }

    @Test("an event whose transaction commits after later events were delivered is still delivered")
    func lateCommittedEvent() async throws {
        try await withStores(2) { stores in
            try await stores[1].migrate()
            let endpoint = "https://hooks.example/a"
            // A transaction takes an event ID and stays open while a later event commits and is
            // delivered: the endpoint's mark must not pass it.
            var first: [LedgerEvent] = []
            try await holdingTransaction(
                on: stores[1],
                after: """
                    INSERT INTO events (type, bundle_id, app_user_id, payload, created_at)
                    VALUES ('test.late', 'com.example.app', NULL, '{}', 0)
                    """
            ) {
                _ = try await stores[0].record(Fixture.transaction("t1", user: "alice"), grants: [])
                first = try await stores[0].dueEvents(endpoint: endpoint, now: Fixture.at(0), limit: 10)
                #expect(first.map(\.type) == ["transaction.recorded"])
                try await stores[0].markDeliveries(
                    first.map { DeliveryAttempt(eventID: $0.id, delivered: true, at: Fixture.at(1), retryAt: nil) },
                    endpoint: endpoint)
                #expect(try await stores[0].undeliveredEventCount(endpoint: endpoint) == 0)
            }

            let late = try await stores[0].dueEvents(endpoint: endpoint, now: Fixture.at(2), limit: 10)
            #expect(late.map(\.type) == ["test.late"])
            #expect(late.allSatisfy { $0.id < first[0].id })
            #expect(try await stores[0].undeliveredEventCount(endpoint: endpoint) == 1)
            try await stores[0].markDeliveries(
                late.map { DeliveryAttempt(eventID: $0.id, delivered: true, at: Fixture.at(3), retryAt: nil) },
                endpoint: endpoint)
            #expect(try await stores[0].undeliveredEventCount(endpoint: endpoint) == 0)
            #expect(try await stores[0].dueEvents(endpoint: endpoint, now: Fixture.at(4), limit: 10).isEmpty)
        }
    }

    @Test("a statement waiting for a lock longer than the connection wait is unavailable")
    func blockedStatement() async throws {
        try await withStores(2, connectionWait: .seconds(3)) { stores in
            try await stores[1].migrate()
            try await holdingTransaction(on: stores[1], after: "LOCK TABLE transactions IN ACCESS EXCLUSIVE MODE") {
                await #expect(throws: LedgerStoreError(.unavailable)) { try await stores[0].transaction(id: "t1") }
            }
            // The store serves again once the lock is gone; on a loaded machine the connection that
            // replaces the one given up may take longer than the wait to open, which is answered
            // as unavailable too, so the read is tried a few times.
            var answered = false
            for _ in 0..<10 where !answered {
                do {
                    #expect(try await stores[0].transaction(id: "t1") == nil)
                    answered = true
                } catch let error as LedgerStoreError where error.code == .unavailable {
                    continue
                }
            }
            #expect(answered, "the store answered again after the lock was released")
        }
    }

    @Test("a statement that binds rows as arrays is prepared once per connection, whatever its number of rows")
    func preparedStatements() async throws {
        try await withStores(1) { stores in
            let tag = "rows \(UUID().uuidString)"
            @Sendable func statement(_ count: Int) -> LedgerSQL {
                let rows = (0..<count).map { [LedgerValue.integer(Int64($0)), .text("row \($0)")] }
                return "SELECT /* \(unescaped: tag) */ c.n AS value FROM (\(values: rows)) AS c(n, label) ORDER BY c.n"
            }
            try await stores[0].lease(limit: nil) { connection in
                for count in 1...4 {
                    let rows = try PostgresRows(rows: await connection.rows(of: statement(count)))
                    #expect(try rows.decode(LedgerColumn<Int64>.self).map(\.value) == (0..<Int64(count)).map { $0 })
                }
                // A statement of single values is sent with its text.
                let single: LedgerSQL = "SELECT /* \(unescaped: tag) */ \(7) AS value"
                for _ in 0..<2 { _ = try await connection.rows(of: single) }
                let prepared = try await connection.rows(
                    "SELECT count(*) FROM pg_prepared_statements WHERE strpos(statement, \(tag)) > 0")
                let count = try prepared.first?.decode(Int64.self)
                #expect(count == 1, "\(count ?? 0) statements of the tag are prepared on the connection")
            }
        }
    }

    @Test("a connection on which a statement could not be prepared runs its statements with their text again")
    func failedPreparation() async throws {
        try await withStores(2) { stores in
            let table = "prepared_\(UUID().uuidString.prefix(8).lowercased())"
            let insert: LedgerSQL = "INSERT INTO \(unescaped: table) (n) \(values: [[LedgerValue.integer(1)]])"
            try await stores[0].lease(limit: nil) { connection in
                _ = try await connection.rows(PostgresQuery(unsafeSQL: "CREATE TABLE \(table) (n BIGINT)"))
                _ = try await connection.rows("SET lock_timeout = '200ms'")
                // The first run, which prepares it, cannot: the table is locked.
                try await holdingTransaction(
                    on: stores[1], after: PostgresQuery(unsafeSQL: "LOCK TABLE \(table) IN ACCESS EXCLUSIVE MODE")
                ) {
                    await #expect(throws: PSQLError.self) { _ = try await connection.rows(of: insert) }
                }
                for _ in 0..<2 { _ = try await connection.rows(of: insert) }
                let count = try await connection.rows(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"))
                #expect(try count.first?.decode(Int64.self) == 2)
            }
        }
    }

    @Test("a transaction PostgreSQL ends to break a deadlock runs again")
    func deadlockRunsAgain() async throws {
        try await withStores(1) { stores in
            let store = stores[0]
            _ = try await store.client.query("CREATE TABLE pair (k INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
            _ = try await store.client.query("INSERT INTO pair VALUES (1, 0), (2, 0)")
            let runs = RunCount()
            let (firstLocked, firstSignal) = AsyncStream.makeStream(of: Void.self)
            let (secondLocked, secondSignal) = AsyncStream.makeStream(of: Void.self)
            let committer = PostgresCommitter(primary: store.primary, wait: .seconds(60), limit: .seconds(60))
            // Each locks one row, then waits for the other's row: on their first run only.
            func job(
                first: Int, then second: Int, signal: AsyncStream<Void>.Continuation, wait: AsyncStream<Void>
            )
                -> PostgresWrite
            {
                .run { connection in
                    let run = runs.value.add(1, ordering: .relaxed).newValue
                    _ = try await connection.rows("UPDATE pair SET v = v + 1 WHERE k = \(first)")
                    if run <= 2 {
                        signal.yield()
                        for await _ in wait { break }
                    }
                    _ = try await connection.rows("UPDATE pair SET v = v + 1 WHERE k = \(second)")
                    return run
                }
            }
            async let one = committer.commit(
                [.init(write: job(first: 1, then: 2, signal: firstSignal, wait: secondLocked), queued: .now)], isolated: false)
            async let two = committer.commit(
                [.init(write: job(first: 2, then: 1, signal: secondSignal, wait: firstLocked), queued: .now)], isolated: false)
            let results = try await [one, two].flatMap { $0 }
            #expect(results.allSatisfy { (try? $0.get()) != nil })
            // The victim runs at least once more; on a loaded machine PostgreSQL may end a later run
            // too. What must hold is that every ended run left nothing behind: each job's two updates
            // are counted once.
            #expect(runs.value.load(ordering: .relaxed) >= 3, "the deadlock's victim ran once more")
            let values = try await store.client.query("SELECT v FROM pair ORDER BY k").collect().map {
                try $0.decode(Int.self)
            }
            #expect(values == [2, 2])
        }
    }

    @Test("stores migrating at once apply each migration once")
    func migrationsTogether() async throws {
        try await withStores(3) { stores in
            _ = try await concurrently(stores.count) { try await stores[$0].migrate() }
            try await stores[2].migrate()
            let applied = try await stores[0].client.query("SELECT id FROM migrations ORDER BY id").collect()
                .map { try $0.decode(String.self) }
            #expect(applied == LedgerSchema.migrations.map(\.id).sorted())
            #expect(
                try await stores[1].record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins) == .recorded
            )
        }
    }

    @Test("Apple's signed JWS are stored out of the row without an attempt to compress them")
    func signedTextUncompressed() async throws {
        try await withStores(1) { stores in
            try await stores[0].migrate()
            // Long and repetitive: PostgreSQL's default would compress it.
            var transaction = Fixture.transaction("t1", user: "alice")
            transaction.signedTransaction = String(repeating: "eyJhbGciOiJFUzI1NiJ9", count: 500)
            #expect(try await stores[0].record(transaction, grants: Fixture.coins) == .recorded)
            let storage = try await stores[0].client.query(
                """
                SELECT attrelid::regclass::text || '.' || attname, attstorage::text FROM pg_attribute
                WHERE attname IN ('signed_transaction', 'signed_payload')
                  AND attrelid IN ('transactions'::regclass, 'notifications'::regclass)
                ORDER BY 1
                """
            ).collect().map { try $0.decode((String, String).self) }
            #expect(storage.map(\.0) == ["notifications.signed_payload", "transactions.signed_transaction"])
            #expect(storage.map(\.1) == ["e", "e"])
            // The value is kept whole, uncompressed.
            let stored = try await stores[0].client.query(
                "SELECT length(signed_transaction), pg_column_compression(signed_transaction) FROM transactions"
            ).collect().map { try $0.decode((Int?, String?).self) }
            #expect(stored.count == 1)
            #expect(stored.first?.0 == 10_000)
            #expect(stored.first?.1 == nil)
        }
    }

    @Test("writes, reads and lookups run on the connections' own event loop, apart from the server's")
    func statementsRunOnTheLedgersEventLoop() async throws {
        try await withStores(1) { stores in
            let store = stores[0]
            try await store.migrate()
            let loop = PostgresEventLoop.shared.loop
            let written = try await store.write(for: "alice") { connection in
                let before = loop.inEventLoop && connection.eventLoop === loop
                _ = try await connection.rows("SELECT 1")
                return before && loop.inEventLoop
            }
            #expect(written, "a write's statements ran elsewhere")
            let read = try await store.read { connection in
                _ = try await connection.rows("SELECT 1")
                return loop.inEventLoop && connection.eventLoop === loop
            }
            #expect(read, "a read's statements ran elsewhere")
            // The whole path of an upload: its lookup by digest, then its ingest.
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(try await store.transaction(id: "t1") != nil)
            #expect(!loop.inEventLoop, "the caller resumed on the ledger's loop")
        }
    }

    @Test("a write that waited for a customer's metrics lock reads the state the write before it committed")
    func metricsLockWaitReadsTheCommittedState() async throws {
        // One customer's two purchases, the second recorded while another replica's write of the
        // first holds the customer's lock: the customer is new once, as on one store alone.
        typealias P = PurchaseMetricsTests
        let other = P.purchase("c0", user: "bob", kind: 0, at: P.start)
        let first = P.purchase("c1", user: "alice", kind: 0, at: P.start + 1_000)
        let second = P.purchase("c2", user: "alice", kind: 1, at: P.start + 2_000)
        let day = Int(P.start / P.day)
        // What the job folded of the writes' changes.
        func reading(_ store: any LedgerStore) async throws -> MetricsReading {
            while try await store.updateMetrics(limit: 10) > 0 {}
            return try await store.metrics(
                bundleID: Fixture.bundleID, environment: .sandbox, days: (day - 1)...(day + 2),
                now: LedgerTime.date(P.start + 3_000))
        }
        let alone = try SQLiteLedger(path: nil)
        try await alone.migrate()
        for transaction in [other, first, second] { _ = try await alone.record(transaction, grants: []) }
        let expected = try await reading(alone)
        try await alone.shutdown()
        #expect(expected.days.map { $0.counts[.newCustomers] }.reduce(0, +) == 2, "bob and alice")

        try await withStores(2) { stores in
            try await stores[1].migrate()
            // Committed first, so that the JWS header both purchases share is stored already.
            _ = try await stores[0].record(other, grants: [])
            let (held, heldSignal) = AsyncStream.makeStream(of: Int32.self)
            let (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
            let holder = Task {
                defer { heldSignal.finish() }
                try await stores[1].lease(limit: nil) { connection in
                    try await connection.withTransaction(logger: PostgresLedger.quiet) { connection in
                        _ = try await PostgresLedger.ingest([LedgerIngest(first, grants: [])], on: connection)
                        let pid = try await connection.rows("SELECT pg_backend_pid()").first?.decode(Int32.self)
                        heldSignal.yield(try #require(pid))
                        for await _ in release { break }
                    }
                }
            }
            var holderPID: Int32?
            for await pid in held { holderPID = pid; break }
            let pid = try #require(holderPID)
            let waiting = Task { try await stores[0].record(second, grants: []) }
            // The second write waits for the customer's lock, which the first write's backend holds
            // (tests on other schemas of the cluster take advisory locks of their own meanwhile).
            let deadline = ContinuousClock.now + .seconds(60)
            var blocked = false
            while !blocked, ContinuousClock.now < deadline {
                blocked = try await stores[0].client.query(
                    """
                    SELECT count(*) FROM pg_locks
                    WHERE locktype = 'advisory' AND NOT granted AND \(pid) = ANY(pg_blocking_pids(pid))
                    """
                ).collect().first?.decode(Int.self) ?? 0 > 0
                if !blocked { await Task.yield() }
            }
            try #require(blocked, "the second write waited for the customer's lock")
            releaseSignal.yield()
            try await holder.value
            #expect(try await waiting.value == .recorded)
            #expect(try await reading(stores[0]) == expected)
        }
    }

    @Test("replicas recording and keeping the subscription metrics at once agree with one store doing it alone")
    func metricsOnReplicas() async throws {
        typealias T = SubscriptionMetricsTests
        let day = T.day
        // Twelve customers: monthly subscriptions renewed a few times (some after a trial, some in
        // JPY), a consumable each, and a refund of every third subscription's second period.
        var transactions: [RecordedTransaction] = []
        for customer in 0..<12 {
            let user = "user-\(customer)", original = "s\(customer)"
            let start = T.start + Int64(customer) * day
            let trial = customer % 2 == 0
            if trial { transactions.append(T.subscription(original, original: original, user: user, from: start, days: 7, trial: true)) }
            for period in 0..<(customer % 4 + 1) {
                let from = start + (trial ? 7 * day : 0) + Int64(period) * 30 * day
                transactions.append(
                    T.subscription(
                        trial || period > 0 ? "\(original)-\(period)" : original, original: original, user: user, from: from,
                        days: 30, price: customer % 3 == 0 ? 1_200_000 : 9_990, currency: customer % 3 == 0 ? "JPY" : "USD",
                        storefront: customer % 3 == 0 ? "JPN" : "USA",
                        revokedAt: customer % 3 == 1 && period == 1 ? from + 3 * day : nil))
            }
            transactions.append(Fixture.transaction("c\(customer)", user: user, purchasedAt: Double(customer) * 3_600))
        }
        func reading(_ store: any LedgerStore) async throws -> (MetricsReading, [[MetricCount]]) {
            let reading = try await store.metrics(
                bundleID: Fixture.bundleID, environment: .sandbox, days: T.firstDay...(T.firstDay + 200),
                now: LedgerTime.date(T.start + 60 * day))
            let churn = try await store.churnedSubscriptions(
                bundleID: Fixture.bundleID, environment: .sandbox,
                periods: (0..<6).map {
                    MetricPeriod(
                        start: LedgerTime.date(T.start + Int64($0) * 30 * day),
                        end: LedgerTime.date(T.start + Int64($0 + 1) * 30 * day))
                })
            return (reading, churn)
        }
        let alone = try SQLiteLedger(path: nil)
        try await alone.migrate()
        for transaction in transactions { _ = try await alone.record(transaction, grants: []) }
        while try await alone.updateMetrics(limit: 5) > 0 {}
        let expected = try await reading(alone)
        try await alone.shutdown()
        #expect(expected.0.days.contains { $0.counts[.paidStarts] > 0 })

        let all = transactions
        try await withStores(2) { stores in
            try await stores[0].migrate()
            // Each replica records every other transaction while both work the metrics out in
            // small steps, at once.
            _ = try await concurrently(4) { task in
                let store = stores[task % 2]
                if task < 2 {
                    for (index, transaction) in all.enumerated() where index % 2 == task {
                        _ = try await store.record(transaction, grants: [])
                    }
                } else {
                    for _ in 0..<40 { _ = try await store.updateMetrics(limit: 3) }
                }
            }
            _ = try await concurrently(2) { task in while try await stores[task].updateMetrics(limit: 3) > 0 {} }
            let (found, churn) = try await reading(stores[1])
            #expect(found == expected.0)
            #expect(churn == expected.1)
        }
    }
}

/// How many times jobs ran, shared by them.
private final class RunCount: Sendable {
    let value = Atomic<Int>(0)
}
