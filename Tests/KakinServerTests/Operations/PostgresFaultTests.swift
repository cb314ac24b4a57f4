import AppStoreTesting
import Foundation
import KakinTestSupport
import KakinWire
import Logging
import PostgresNIO
import ServiceLifecycle
import StoreSandbox
import Synchronization
import Testing
import X509

@testable import KakinLedger
@testable import KakinServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A purchase server on a PostgreSQL cluster of each test's own, which the test stops and starts
/// again under load, or blocks with a table lock: every request ends, either recorded (2xx) or
/// refused with a retryable 503 and `Retry-After`, in bounded time; what was acknowledged is in
/// the ledger, a retry records the rest, nothing is granted twice, and the server still stops
/// within its drain time when asked to shut down gracefully (as SIGTERM asks).
///
/// The server is the one `kakin server` runs (`buildApplication` in a service group), on a
/// socket of its own. The shared cluster of `scripts/test` cannot be stopped (other suites use it
/// at the same time), so each test runs `initdb` and `pg_ctl` itself (see
/// ``PrivatePostgresCluster``); like the other PostgreSQL tests, the suite runs where
/// `KAKIN_TEST_POSTGRES_URL` is set.
@Suite(.serialized) struct PostgresFaultTests {
    /// Why the suite is skipped here, or `nil` when it runs.
    static let skipReason: String? = {
        if PostgresTestDatabase.url == nil {
            return "KAKIN_TEST_POSTGRES_URL is not set (scripts/test sets it where PostgreSQL is installed); skipped"
        }
        if let reason = PrivatePostgresCluster.unavailableReason { return "\(reason); skipped" }
        return nil
    }()
    static let enabled = skipReason == nil

    /// The publishable key of the server's app.
    static let publishable = "pk_faults"
    /// The certificate authority that signs the purchases, which the server trusts.
    static let authority = try! SandboxCertificateAuthority.generate()

    /// What the sandbox's increasePoints grants.
    static let pointsPerPurchase: Int64 = 100
    /// How long a graceful shutdown may take: the server drains the requests in flight, then stops.
    static let drainLimit: Duration = .seconds(15)

    /// One signed purchase minted for a test: its transaction ID, customer and request body.
    struct Purchase: Sendable {
        let id: String
        let user: String
        let body: Data
    }

    /// How one POST /v1/transactions ended.
    struct Answer: Sendable {
        /// The HTTP status; 0 when no answer came (a timeout, a refused or lost connection).
        let status: Int
        let retryAfter: String?
        /// From sending to the end of the answer.
        let seconds: Double
        /// The client's error when no answer came, or the error code of a failure answer.
        let detail: String?

        var succeeded: Bool { (200..<300).contains(status) }
        var retryableRefusal: Bool { status == 503 && retryAfter != nil }
        /// What the server must never answer: anything but 2xx, or 503 with Retry-After.
        var isBad: Bool { !succeeded && !retryableRefusal }
    }

    /// The stack a test runs: the cluster, one purchase server on it, the purchases to post and
    /// a store on the cluster for checking the ledger.
    struct Stack: Sendable {
        let cluster: PrivatePostgresCluster
        let server: RunningServer
        let url: String
        let purchases: [Purchase]
        let store: PostgresLedger
    }

    /// How long a client waits for an answer; a request without one by then counts as a failure.
    /// Ten times the server's connection wait in these tests, and more than PostgreSQL needs to
    /// start again.
    static let requestTimeout: TimeInterval = 20

    /// The HTTP client of the tests: enough connections for every concurrent client, and
    /// ``requestTimeout`` on each request.
    static let client: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 64
        configuration.timeoutIntervalForRequest = requestTimeout
        configuration.timeoutIntervalForResource = requestTimeout
        return URLSession(configuration: configuration)
    }()

    /// Posts a purchase as the app does.
    static func post(_ purchase: Purchase, to url: String) async -> Answer {
        var request = URLRequest(url: URL(string: "\(url)/v1/transactions")!, timeoutInterval: requestTimeout)
        request.httpMethod = "POST"
        request.httpBody = purchase.body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(publishable, forHTTPHeaderField: "X-Kakin-Key")
        let start = ContinuousClock.now
        do {
            let (data, response) = try await client.data(for: request)
            let http = response as? HTTPURLResponse
            let error = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["error"] as? [String: Any]
            return Answer(
                status: http?.statusCode ?? 0, retryAfter: http?.value(forHTTPHeaderField: "Retry-After"),
                seconds: seconds(ContinuousClock.now - start), detail: error?["code"] as? String)
        } catch {
            let code = (error as? URLError).map { $0.code == .timedOut ? "timed out" : "URLError \($0.code.rawValue)" }
            return Answer(
                status: 0, retryAfter: nil, seconds: seconds(ContinuousClock.now - start),
                detail: code ?? "\(error)")
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func format(_ value: Double) -> String { String(format: "%.2f s", value) }

    /// "N requests: N 2xx, N 503 with Retry-After, …", naming every other outcome.
    static func tally(_ answers: [Answer]) -> String {
        let succeeded = answers.filter(\.succeeded).count
        let refused = answers.filter(\.retryableRefusal).count
        let bare503 = answers.filter { $0.status == 503 && $0.retryAfter == nil }.count
        let none = answers.filter { $0.status == 0 }
        let others = Dictionary(
            grouping: answers.filter { $0.status != 0 && $0.status != 503 && !$0.succeeded },
            by: { "\($0.status) \($0.detail ?? "")" }
        ).mapValues(\.count)
        let noneKinds = Dictionary(grouping: none, by: { $0.detail ?? "?" }).mapValues(\.count)
        let slowest = answers.map(\.seconds).max() ?? 0
        return "\(answers.count) requests: \(succeeded) 2xx, \(refused) 503 with Retry-After, "
            + "\(bare503) 503 without Retry-After, \(others.values.reduce(0, +)) other statuses \(others), "
            + "\(none.count) without an answer \(noneKinds); slowest answer \(format(slowest))"
    }

    // MARK: The stack

    /// Runs `body` on a new cluster with one server, and removes everything afterwards (also
    /// when the test fails). The server's pool holds `maxConnections` connections, and waits
    /// `connectionWait` seconds for one (also its statement timeout).
    static func withStack(
        purchases count: Int, users: Int, maxConnections: Int, connectionWait: Int,
        _ body: (Stack) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-faults-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cluster = try await PrivatePostgresCluster.start()
        defer { cluster.remove() }
        let purchases = try await mint(count, users: users)
        let root = directory.appendingPathComponent("root.pem")
        try authority.root.serializeAsPEM().pemString.write(to: root, atomically: true, encoding: .utf8)
        var app = ServerConfiguration.App(bundleID: ExampleApp.bundleID, appAppleID: ExampleApp.appAppleID)
        app.environments = [.sandbox]
        app.extraRootPaths = [root.path]
        app.grantsPath = ExampleApp.grantsFile.path
        var configuration = ServerConfiguration(
            database: cluster.url, serverKeyPath: directory.appendingPathComponent("server-key.pem").path,
            keys: .init(publishable: publishable, secret: "sk_faults_0123456789"), apps: [app])
        configuration.listen = .init(host: "127.0.0.1", port: 0)
        configuration.postgresMaxConnections = maxConnections
        configuration.postgresConnectionWaitSeconds = connectionWait
        configuration.reconcileIntervalSeconds = 0
        configuration.logLevel = "error"
        // The load comes from one address: no per-address limits.
        configuration.rateLimits.enabled = false
        let server = try await RunningServer.start(configuration)
        defer { server.kill() }
        var options = try PostgresConnectionOptions(url: cluster.url)
        options.maxConnections = 2
        let store = try PostgresLedger(options: options, logger: KakinServerHTTP.quietLogger)
        do {
            try await body(
                Stack(cluster: cluster, server: server, url: server.url, purchases: purchases, store: store))
        } catch {
            try? await store.shutdown()
            throw error
        }
        try await store.shutdown()
    }

    /// `count` signed purchases of 100 points, for customers load-1 … load-`users` (round robin),
    /// bought from a sandbox signing with ``authority``, each with the app account token the SDK
    /// gives its customer's purchases (so that the server owes Apple nothing).
    static func mint(_ count: Int, users: Int) async throws -> [Purchase] {
        let engine = try ExampleSandbox.engine(catalog: ExampleApp.catalog(), authority: authority, clock: SandboxClock())
        _ = try await engine.createTester(name: "load", id: "load")
        var purchases: [Purchase] = []
        for index in 0..<count {
            let user = "load-\(index % users + 1)"
            guard
                case .purchased(let transaction) = try await engine.purchase(
                    .init(
                        testerID: "load", productID: ExampleApp.productID("increasePoints"),
                        appAccountToken: AppAccountToken.derived(from: user)))
            else { throw ClusterError("the sandbox did not sell increasePoints") }
            let body = TransactionSubmission(
                bundleId: ExampleApp.bundleID, appUserId: user,
                signedTransaction: try engine.signer.signTransaction(transaction, at: Date()))
            purchases.append(Purchase(id: transaction.id, user: user, body: try KakinJSON.encoder().encode(body)))
        }
        return purchases
    }

    /// Posts each purchase again until it is recorded (as an app retries), honouring
    /// `Retry-After` up to a second; the purchases that were still not recorded by `deadline`,
    /// with their last answers.
    static func retryUntilRecorded(
        _ indices: [Int], of purchases: [Purchase], url: String, deadline: Duration = .seconds(20)
    ) async -> [(index: Int, last: Answer)] {
        let end = ContinuousClock.now + deadline
        let results = await concurrently(indices.count, width: 16) { position -> (Int, Answer?) in
            let index = indices[position]
            var last: Answer?
            for _ in 0..<60 where ContinuousClock.now < end {
                let answer = await post(purchases[index], to: url)
                if answer.succeeded { return (index, nil) }
                last = answer
                let wait = answer.retryableRefusal ? min(Double(answer.retryAfter ?? "1") ?? 1, 1) : 0.2
                try? await Task.sleep(for: .milliseconds(Int(wait * 1000)))
            }
            return (index, last)
        }
        return results.compactMap { index, last in last.map { (index, $0) } }
    }

    /// The IDs of the recorded transactions.
    static func recordedIDs(_ store: PostgresLedger) async throws -> [String] {
        var ids: [String] = []
        for try await id in try await store.client.query("SELECT transaction_id FROM transactions").decode(String.self) {
            ids.append(id)
        }
        return ids
    }

    /// The one number `sql` answers.
    static func count(_ sql: PostgresQuery, on store: PostgresLedger) async throws -> Int {
        for try await count in try await store.client.query(sql).decode(Int.self) { return count }
        return 0
    }

    /// Checks the ledger against the purchases that were sent (`sent`): each is recorded once,
    /// for its customer, and credited once; every customer's balance is what their recorded
    /// purchases grant; nothing else is recorded.
    static func checkLedger(_ store: PostgresLedger, purchases: [Purchase], sent: [Int]) async throws {
        let expected = Dictionary(grouping: sent.map { purchases[$0] }, by: \.user)
        var wrong: [String] = []
        for (user, bought) in expected.sorted(by: { $0.key < $1.key }) {
            let customer = try await store.customer(bundleID: ExampleApp.bundleID, appUserID: user)
            let ids = customer.transactions.map(\.transactionID)
            let credits = customer.ledger.filter { $0.kind == .credit }.compactMap(\.transactionID)
            let points = customer.balances["points"] ?? 0
            if Set(ids) != Set(bought.map(\.id)) || ids.count != bought.count {
                wrong.append("\(user): \(ids.count) transactions recorded, \(bought.count) sent")
            }
            if credits.count != ids.count || Set(credits) != Set(ids) {
                wrong.append("\(user): \(credits.count) credits for \(ids.count) transactions")
            }
            if points != Int64(ids.count) * pointsPerPurchase {
                wrong.append("\(user): \(points) points for \(ids.count) purchases of \(pointsPerPurchase)")
            }
        }
        #expect(wrong.count == 0, "\(wrong.count) problems in the ledger: \(wrong.prefix(10))")
        let all = try await recordedIDs(store)
        #expect(all.count == sent.count, "\(all.count) transactions recorded in all, \(sent.count) purchases sent")
        let credits = try await count("SELECT count(*) FROM ledger_entries WHERE kind = 'credit'", on: store)
        #expect(credits == sent.count, "\(credits) credits in all for \(sent.count) purchases")
    }

    /// Asks the server to shut down gracefully (as SIGTERM does) and expects it to stop within
    /// ``drainLimit``, without an error.
    static func expectStopsOnSIGTERM(_ server: RunningServer) async {
        let start = ContinuousClock.now
        await server.shutDown()
        var outcome = server.outcome
        while outcome == nil, ContinuousClock.now < start + drainLimit {
            try? await Task.sleep(for: .milliseconds(50))
            outcome = server.outcome
        }
        let took = format(seconds(ContinuousClock.now - start))
        print("PostgresFaultTests: graceful shutdown → \(outcome ?? "still running") after \(took)")
        #expect(outcome != nil, "graceful shutdown: the server still ran after \(drainLimit)")
        #expect(outcome == nil || outcome == "stopped", "graceful shutdown: \(outcome ?? "") after \(took)")
        server.kill()
    }

    // MARK: PostgreSQL stopped and started again under load

    /// One purchase posted during the load: how it ended, and when it was sent (seconds from the start).
    struct Sent: Sendable {
        let index: Int
        let answer: Answer
        let sentAt: Double
    }

    /// What the clients of a load share: the next purchase to post, whether the load goes on,
    /// what each request got, and when each step of the fault happened.
    final class LoadRecorder: Sendable {
        let count: Int
        let start = ContinuousClock.now
        let next = Atomic<Int>(0)
        let loading = Atomic<Bool>(true)
        let sent = Mutex<[Sent]>([])
        let timeline = Mutex<[String: Double]>([:])
        /// Yields once for every acknowledged (2xx) purchase.
        let acknowledgements = AsyncStream<Void>.makeStream()

        init(count: Int) { self.count = count }

        /// The next purchase to post, or `nil` once the load is over (or the purchases ran out).
        func take() -> Int? {
            guard loading.load(ordering: .relaxed) else { return nil }
            let index = next.add(1, ordering: .relaxed).oldValue
            return index < count ? index : nil
        }

        func elapsed() -> Double { PostgresFaultTests.seconds(ContinuousClock.now - start) }
        func record(_ entry: Sent) {
            sent.withLock { $0.append(entry) }
            if entry.answer.succeeded { acknowledgements.continuation.yield() }
        }

        /// Returns once `count` purchases were acknowledged, or throws after `limit`.
        func waitForAcknowledgements(_ count: Int, within limit: Duration) async throws {
            let deadline = ContinuousClock.now + limit
            let waiter = Task {
                var seen = 0
                for await _ in acknowledgements.stream {
                    seen += 1
                    if seen >= count { return true }
                }
                return false
            }
            let timer = Task {
                try? await Task.sleep(until: deadline)
                waiter.cancel()
            }
            defer { timer.cancel() }
            guard await waiter.value else {
                Issue.record("fewer than \(count) purchases were acknowledged within \(limit)")
                throw CancellationError()
            }
        }
        func mark(_ step: String) {
            let now = elapsed()
            timeline.withLock { $0[step] = now }
        }
        func finish() { loading.store(false, ordering: .relaxed) }
    }

    /// 16 clients post distinct new purchases; once the server has acknowledged some (and at least
    /// 1 s in), PostgreSQL is stopped with `pg_ctl stop -m MODE`, about 3 s later started again,
    /// and the load goes on 3 s more. Waiting for acknowledgements rather than a fixed time keeps
    /// the stop mid-load on a host slowed by other work.
    func restartUnderLoad(mode: String) async throws {
        let workers = 16
        try await Self.withStack(
            purchases: 3000, users: 40, maxConnections: 8, connectionWait: 2
        ) { stack in
            let (cluster, url, purchases) = (stack.cluster, stack.url, stack.purchases)
            let load = LoadRecorder(count: purchases.count)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<workers {
                    group.addTask {
                        while let index = load.take() {
                            let sentAt = load.elapsed()
                            let answer = await Self.post(purchases[index], to: url)
                            load.record(Sent(index: index, answer: answer, sentAt: sentAt))
                        }
                    }
                }
                group.addTask {
                    defer { load.finish() }
                    try await Task.sleep(for: .seconds(1))
                    try await load.waitForAcknowledgements(workers, within: .seconds(30))
                    load.mark("stopping")
                    try await cluster.stop(mode: mode)
                    load.mark("stopped")
                    try await Task.sleep(for: .seconds(3))
                    load.mark("starting")
                    try await cluster.start()
                    load.mark("started")
                    try await Task.sleep(for: .seconds(3))
                    load.mark("load ended")
                }
                try await group.waitForAll()
            }

            let entries = load.sent.withLock { $0 }
            let answers = entries.map(\.answer)
            let times = load.timeline.withLock { $0 }
            let started = times["started"] ?? 0
            let firstSuccessAfterRestart = entries.filter { $0.answer.succeeded && $0.sentAt >= started }
                .map { $0.sentAt + $0.answer.seconds }.min()
            let summary =
                "pg_ctl stop -m \(mode): \(Self.tally(answers)); timeline "
                + times.sorted { $0.value < $1.value }.map { "\($0.key) \(Self.format($0.value))" }
                    .joined(separator: ", ")
                + "; first 2xx after the restart at "
                + (firstSuccessAfterRestart.map(Self.format) ?? "none")
            print("PostgresFaultTests: \(summary)")
            #expect(load.next.load(ordering: .relaxed) < purchases.count, "the minted purchases lasted the whole load")
            #expect(
                entries.contains { $0.answer.succeeded && $0.sentAt < (times["stopping"] ?? 0) },
                "purchases were recorded before the stop: \(summary)")

            // Every request ended with 2xx or a retryable 503, nothing else.
            let bad = entries.filter { $0.answer.isBad }
            #expect(
                bad.count == 0,
                "\(bad.count) requests ended otherwise than 2xx or 503 with Retry-After (\(summary)); first: \(bad.prefix(5).map { "purchase \($0.index) sent at \(Self.format($0.sentAt)): \($0.answer.status) \($0.answer.detail ?? "") after \(Self.format($0.answer.seconds))" })"
            )

            // What was acknowledged is in the ledger, before any retry.
            let recorded = Set(try await Self.recordedIDs(stack.store))
            let acknowledged = entries.filter(\.answer.succeeded).map(\.index)
            let lost = acknowledged.filter { !recorded.contains(purchases[$0].id) }
            #expect(lost.count == 0, "\(lost.count) of \(acknowledged.count) acknowledged purchases are not in the ledger")

            // The others are posted again until they are recorded, as the app does.
            let unrecorded = entries.filter { !$0.answer.succeeded }.map(\.index)
            let failedRetries = await Self.retryUntilRecorded(unrecorded, of: purchases, url: url)
            #expect(
                failedRetries.count == 0,
                "\(failedRetries.count) of \(unrecorded.count) purchases were still not recorded after 20 s of retries; last answers: \(Self.tally(failedRetries.map(\.last)))"
            )
            print(
                "PostgresFaultTests: -m \(mode): \(unrecorded.count) purchases retried, \(failedRetries.count) still not recorded"
            )
            try await Self.checkLedger(stack.store, purchases: purchases, sent: entries.map(\.index))
            await Self.expectStopsOnSIGTERM(stack.server)
        }
    }

    @Test(.enabled(if: enabled, "\(skipReason ?? "")"), .timeLimit(.minutes(2)))
    func postgresStoppedImmediatelyAndRestartedMidLoad() async throws {
        try await restartUnderLoad(mode: "immediate")
    }

    @Test(.enabled(if: enabled, "\(skipReason ?? "")"), .timeLimit(.minutes(2)))
    func postgresStoppedFastAndRestartedMidLoad() async throws {
        try await restartUnderLoad(mode: "fast")
    }

    // MARK: Blocked database work

    /// A session of its own on the cluster holding `LOCK TABLE … IN ACCESS EXCLUSIVE MODE` until
    /// ``release()``: every statement on the table waits for it.
    final class TableLock: Sendable {
        private let store: PostgresLedger
        private let releasing = AsyncStream<Void>.makeStream()
        private let holder: Task<Void, any Error>

        init(_ table: String, on cluster: PrivatePostgresCluster) async throws {
            var options = try PostgresConnectionOptions(url: cluster.url)
            options.maxConnections = 1
            let store = try PostgresLedger(options: options, logger: KakinServerHTTP.quietLogger)
            let locked = AsyncThrowingStream<Void, any Error>.makeStream()
            let released = releasing.stream
            self.store = store
            holder = Task {
                do {
                    try await store.client.withConnection { session in
                        let logger = Logger(label: "kakin.test.lock")
                        try await session.query("BEGIN", logger: logger)
                        try await session.query("SET LOCAL statement_timeout = 0", logger: logger)
                        try await session.query(
                            PostgresQuery(unsafeSQL: "LOCK TABLE \(table) IN ACCESS EXCLUSIVE MODE"), logger: logger)
                        locked.continuation.yield()
                        for await _ in released { break }
                        try await session.query("ROLLBACK", logger: logger)
                    }
                    locked.continuation.finish()
                } catch {
                    locked.continuation.finish(throwing: error)
                    throw error
                }
            }
            do {
                for try await _ in locked.stream { return }
                throw ClusterError("the lock on \(table) was not taken")
            } catch {
                await release()
                throw error
            }
        }

        /// Ends the locking transaction and closes its session.
        func release() async {
            releasing.continuation.yield()
            releasing.continuation.finish()
            _ = try? await holder.value
            try? await store.shutdown()
        }
    }

    /// Waits until `count` statements of other sessions wait for a lock (the request is blocked).
    static func waitForBlockedStatements(_ count: Int, store: PostgresLedger) async throws {
        let deadline = ContinuousClock.now + .seconds(15)
        var waiting = 0
        while ContinuousClock.now < deadline {
            waiting = try await Self.count("SELECT count(*) FROM pg_locks WHERE NOT granted", on: store)
            if waiting >= count { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("only \(waiting) statements waited for a lock after 15 s, \(count) expected")
        throw CancellationError()
    }

    /// A statement that waits for a lock ends with 503 and Retry-After once PostgreSQL's
    /// `statement_timeout` cancels it, and the retry after the lock is released records the
    /// purchase. The server sets `statement_timeout` to its `connectionWaitSeconds` on every
    /// connection it opens.
    @Test(.enabled(if: enabled, "\(skipReason ?? "")"), .timeLimit(.minutes(2)))
    func aBlockedStatementEndsWithRetryableRefusalAndSucceedsOnRetry() async throws {
        let statementTimeout = 2.0
        let slack = 3.0
        try await Self.withStack(
            purchases: 2, users: 1, maxConnections: 4, connectionWait: Int(statementTimeout)
        ) { stack in
            let (url, purchases) = (stack.url, stack.purchases)
            let first = await Self.post(purchases[0], to: url)
            #expect(first.succeeded, "before the lock: \(Self.tally([first]))")

            let lock = try await TableLock("transactions", on: stack.cluster)
            let blocked = await Self.post(purchases[1], to: url)
            print(
                "PostgresFaultTests: blocked by a lock, statement_timeout \(Self.format(statementTimeout)): \(blocked.status) Retry-After \(blocked.retryAfter ?? "none") after \(Self.format(blocked.seconds))"
            )
            #expect(
                blocked.retryableRefusal,
                "a request blocked by a lock ends with 503 and Retry-After: \(Self.tally([blocked])) (\(blocked.detail ?? ""))")
            #expect(
                blocked.seconds <= statementTimeout + slack,
                "it ends within the statement timeout (\(Self.format(statementTimeout)) + \(Self.format(slack))), not after \(Self.format(blocked.seconds))"
            )
            await lock.release()

            let failed = await Self.retryUntilRecorded([1], of: purchases, url: url, deadline: .seconds(15))
            #expect(failed.count == 0, "the retry after the lock was released: \(Self.tally(failed.map(\.last)))")
            try await Self.checkLedger(stack.store, purchases: purchases, sent: [0, 1])
            await Self.expectStopsOnSIGTERM(stack.server)
        }
    }

    /// With a pool of one connection, kept busy by a request that waits for a lock, other
    /// requests end with 503 and Retry-After once `connectionWaitSeconds` has passed, not later;
    /// once the lock is released, the retries are recorded.
    @Test(.enabled(if: enabled, "\(skipReason ?? "")"), .timeLimit(.minutes(2)))
    func aFullPoolRefusesOtherRequestsWithinTheConnectionWait() async throws {
        let connectionWait = 2.0
        let slack = 3.0
        let others = 5
        try await Self.withStack(
            purchases: 2 + others, users: 3,
            maxConnections: 1, connectionWait: Int(connectionWait)
        ) { stack in
            let (url, purchases) = (stack.url, stack.purchases)
            let first = await Self.post(purchases[0], to: url)
            #expect(first.succeeded, "before the lock: \(Self.tally([first]))")

            let lock = try await TableLock("transactions", on: stack.cluster)
            // The busy request holds the pool's only connection while it waits for the lock.
            let busy = Task { await Self.post(purchases[1], to: url) }
            let refused: [Answer]
            do {
                try await Self.waitForBlockedStatements(1, store: stack.store)
                refused = await concurrently(others, width: others) { index in
                    await Self.post(purchases[2 + index], to: url)
                }
            } catch {
                await lock.release()
                _ = await busy.value
                throw error
            }
            let slowest = refused.map(\.seconds).max() ?? 0
            print(
                "PostgresFaultTests: full pool (1 connection, connectionWaitSeconds \(Int(connectionWait))): \(Self.tally(refused)); fastest \(Self.format(refused.map(\.seconds).min() ?? 0))"
            )
            #expect(
                refused.allSatisfy { $0.retryableRefusal },
                "while the only connection is busy, other requests end with 503 and Retry-After: \(Self.tally(refused))")
            #expect(
                slowest <= connectionWait + slack,
                "they end within connectionWaitSeconds (\(Self.format(connectionWait)) + \(Self.format(slack))), the slowest after \(Self.format(slowest))"
            )
            await lock.release()
            let waited = await busy.value
            // The server's statement timeout is its connection wait: the request that waited for
            // the lock ended like the others, and is retried with them.
            #expect(
                waited.succeeded || waited.retryableRefusal,
                "the request that waited for the lock is recorded or refused as retryable: \(Self.tally([waited]))")

            let failed = await Self.retryUntilRecorded(
                Array(1..<(2 + others)), of: purchases, url: url, deadline: .seconds(20))
            #expect(failed.count == 0, "the retries once the pool is free: \(Self.tally(failed.map(\.last)))")
            try await Self.checkLedger(stack.store, purchases: purchases, sent: Array(0..<(2 + others)))
            await Self.expectStopsOnSIGTERM(stack.server)
        }
    }
}

/// A purchase server built from its configuration as `kakin server` builds it, running in a
/// service group of its own in this process.
final class RunningServer: Sendable {
    /// `http://127.0.0.1:PORT`.
    let url: String
    private let group: ServiceGroup
    private let task: Task<Void, Never>
    /// How the group's run ended: `stopped`, or its error; `nil` while it runs.
    private let ended: Outcome

    private init(url: String, group: ServiceGroup, task: Task<Void, Never>, outcome: Outcome) {
        self.url = url
        self.group = group
        self.task = task
        ended = outcome
    }

    /// Builds the server, starts it and returns once it listens.
    static func start(_ configuration: ServerConfiguration) async throws -> RunningServer {
        let ports = AsyncStream<Int>.makeStream()
        var dependencies = ServerDependencies()
        dependencies.logger = KakinServerHTTP.quietLogger
        dependencies.onServerRunning = { _ = ports.continuation.yield($0) }
        let application = try await buildApplication(configuration: configuration, dependencies: dependencies)
        let group = ServiceGroup(configuration: .init(services: [application], logger: KakinServerHTTP.quietLogger))
        let outcome = Outcome()
        let task = Task {
            do {
                try await group.run()
                outcome.set("stopped")
            } catch {
                outcome.set("\(error)")
            }
            ports.continuation.finish()
        }
        for await port in ports.stream {
            return RunningServer(url: "http://127.0.0.1:\(port)", group: group, task: task, outcome: outcome)
        }
        throw ClusterError("the server stopped before it listened: \(outcome.value ?? "")")
    }

    /// How the run ended, once it has: `stopped`, or its error.
    var outcome: String? { ended.value }

    /// Asks for a graceful shutdown: the requests in flight are answered, then the jobs and the
    /// ledger stop.
    func shutDown() async { await group.triggerGracefulShutdown() }

    /// Stops the server at once, whatever it is doing.
    func kill() { task.cancel() }
}

/// How a server's run ended, set once.
final class Outcome: Sendable {
    private let state = Mutex<String?>(nil)
    var value: String? { state.withLock { $0 } }
    func set(_ text: String) { state.withLock { $0 = $0 ?? text } }
}
