import AppStoreModels
import Foundation
import KakinLedger
import KakinServer
import KakinTestSupport
import StoreSandbox
import Testing

/// The jobs over the in-memory implementations of the ledger's roles they keep their state in:
/// the webhooks outbox, the calls owed to Apple, reconciliation's runs.
@Suite struct JobsOverInMemoryRolesTests {
    @Test("webhooks: a failed delivery waits for its retry, then everything is delivered once")
    func webhooksRetryAndDeliverOnce() async throws {
        let clock = SandboxClock.manual(at: ServerFixture.start)
        let outbox = InMemoryOutboxLedger()
        await outbox.append(type: "transaction.recorded", bundleID: ServerFixture.bundleID, appUserID: "user-1", at: clock.now())
        await outbox.append(type: "balance.credited", bundleID: ServerFixture.bundleID, appUserID: "user-1", at: clock.now())
        let exchange = RecordingExchange(failures: 1)
        let endpoint = WebhookEndpoint(url: URL(string: "https://hooks.example.com/kakin")!, secret: "whsec")
        let dispatcher = WebhookDispatcher(
            outbox: outbox, endpoints: [endpoint], exchange: exchange, retryDelay: 60, now: { clock.now() })

        #expect(try await dispatcher.backlog() == 2)
        #expect(try await dispatcher.deliverDue() == 1, "the first post failed")
        #expect(try await dispatcher.backlog() == 1)
        #expect(try await dispatcher.deliverDue() == 0, "the failed one waits for its retry time")
        clock.advance(by: 60)
        #expect(try await dispatcher.deliverDue() == 1)
        #expect(try await dispatcher.deliverDue() == 0, "nothing sent twice")
        #expect(try await dispatcher.backlog() == 0)
        #expect(await exchange.received.count == 3)
        let delivered = try await outbox.webhookDeliveries(bundleID: nil, appUserID: "user-1", limit: 10)
        #expect(delivered.count == 2 && delivered.allSatisfy { $0.deliveredAt != nil })
    }

    /// Makes dispatchers (each a server of its own) over an outbox of two events that loses the
    /// answer of its first claim or its first record of attempts.
    private static func dispatcher(
        losing: AnswerLosingOutbox.Losing, exchange: RecordingExchange
    ) async -> () -> WebhookDispatcher {
        let clock = SandboxClock.manual(at: ServerFixture.start)
        let outbox = AnswerLosingOutbox(InMemoryOutboxLedger(), losing: losing)
        for type in ["transaction.recorded", "balance.credited"] {
            await outbox.ledger.append(type: type, bundleID: ServerFixture.bundleID, appUserID: "user-1", at: clock.now())
        }
        let endpoint = WebhookEndpoint(url: URL(string: "https://hooks.example.com/kakin")!, secret: "whsec")
        return { WebhookDispatcher(outbox: outbox, endpoints: [endpoint], exchange: exchange, now: { clock.now() }) }
    }

    @Test("webhooks: events whose claim committed but whose answer was lost are sent by the next run")
    func webhooksClaimAnswerLost() async throws {
        let exchange = RecordingExchange(failures: 0)
        let dispatcher = await Self.dispatcher(losing: .claim, exchange: exchange)
        let (server, other) = (dispatcher(), dispatcher())
        await #expect(throws: AnswerLosingOutbox.Lost.self) { try await server.deliverDue() }
        #expect(try await other.deliverDue() == 0, "another server waits for the lease")
        #expect(try await server.deliverDue() == 2, "the server that holds them sends them at its next run")
        #expect(try await other.deliverDue() == 0)
        #expect(await exchange.received.count == 2, "each sent once")
    }

    @Test("webhooks: attempts whose record was lost are recorded by the next run, not posted again")
    func webhooksRecordLost() async throws {
        let exchange = RecordingExchange(failures: 0)
        let dispatcher = await Self.dispatcher(losing: .record, exchange: exchange)()
        await #expect(throws: AnswerLosingOutbox.Lost.self) { try await dispatcher.deliverDue() }
        #expect(await exchange.received.count == 2)
        #expect(try await dispatcher.backlog() == 2, "the ledger has not heard of the posts")
        #expect(try await dispatcher.deliverDue() == 0)
        #expect(try await dispatcher.backlog() == 0, "the next run recorded them")
        #expect(await exchange.received.count == 2, "and did not post them again")
    }

    @Test("a call Apple cannot take is tried again with a doubling wait until its window closes")
    func appleCallsBackOff() async throws {
        try await withLedgerStore(.memory) { store in
            let clock = SandboxClock.manual(at: ServerFixture.start)
            // An API host that refuses connections: every attempt fails in a way worth retrying.
            let unreachable = ServerAPIAccess(
                baseURL: URL(string: "http://127.0.0.1:9")!, keyID: "KEY", issuerID: "issuer", privateKey: .init())
            let service = PurchaseService.example(
                store: store, root: ServerFixture.authority.root, now: { clock.now() }
            ) { app in
                app.serverAPI = unreachable
                app.consumption = ConsumptionPolicy(customersConsented: true)
            }
            let calls = InMemoryAppleCallLedger()
            #expect(
                try await calls.recordAppleRequest(
                    AppleRequestRecord(
                        id: "notification-1", kind: .consumptionInformation, bundleID: ServerFixture.bundleID,
                        transactionID: "2000000000000001", environment: .sandbox, detail: "1",
                        requestedAt: clock.now(), nextAttemptAt: clock.now())))
            let sender = AppleRequestSender(service: service, calls: calls)
            #expect(try await sender.sendDue().retried == 1)
            #expect(try await sender.sendDue() == .init(), "not due again before its wait")
            clock.advance(by: 31)
            #expect(try await sender.sendDue().retried == 1)
            let waiting = try #require(try await calls.appleRequests(bundleID: nil, limit: 1).first)
            #expect(waiting.attempts == 2 && waiting.state == .pending)
            #expect(waiting.nextAttemptAt == clock.now().addingTimeInterval(60), "the wait doubled")
            clock.advance(by: 13 * 3600)
            #expect(try await sender.sendDue().failed == 1, "Apple's 12 hours are over")
            #expect(try await calls.appleRequests(bundleID: nil, limit: 1).first?.state == .failed)
        }
    }

    @Test("a reconciliation asked for while one of the app goes on is that run, not a second one")
    func oneReconciliationAtATime() async throws {
        try await withLedgerStore(.memory) { store in
            let service = PurchaseService.example(
                store: store, root: ServerFixture.authority.root,
                configure: { app in
                    app.serverAPI = ServerAPIAccess(
                        baseURL: URL(string: "http://127.0.0.1:9")!, keyID: "KEY", issuerID: "issuer", privateKey: .init())
                })
            let runs = InMemoryLedgerOperations()
            let reconciler = Reconciler(service: service, runs: runs)
            let (first, isNew) = try await reconciler.start(bundleID: ServerFixture.bundleID)
            #expect(isNew)
            let (again, isNewAgain) = try await reconciler.start(bundleID: ServerFixture.bundleID)
            #expect(!isNewAgain && again.id == first.id)
            await #expect(throws: ServerError(.conflict, "")) {
                try await reconciler.reconcile(bundleID: ServerFixture.bundleID)
            }
            #expect(try await reconciler.run(id: first.id)?.state == .running)
            #expect(try await runs.reconciliationRuns(limit: 10).map(\.id) == [first.id])
            await #expect(throws: ServerError(.unknownApp, "")) { try await reconciler.start(bundleID: "com.example.other") }
        }
    }
}

/// An outbox whose first claim commits but never answers, as when the connection to the database
/// is lost while the claim commits; or whose first record of attempts fails.
private actor AnswerLosingOutbox: OutboxLedger {
    struct Lost: Error {}
    enum Losing { case claim, record }
    let ledger: InMemoryOutboxLedger
    private var losing: Losing?

    init(_ ledger: InMemoryOutboxLedger, losing: Losing) {
        self.ledger = ledger
        self.losing = losing
    }

    func claimDueEvents(
        endpoint: String, holder: String, now: Date, limit: Int, leaseUntil: Date
    ) async throws -> [LedgerEvent] {
        let events = try await ledger.claimDueEvents(
            endpoint: endpoint, holder: holder, now: now, limit: limit, leaseUntil: leaseUntil)
        if losing == .claim {
            losing = nil
            throw Lost()
        }
        return events
    }

    func undeliveredEventCount(endpoint: String) async throws -> Int {
        try await ledger.undeliveredEventCount(endpoint: endpoint)
    }

    func markDeliveries(_ attempts: [DeliveryAttempt], endpoint: String) async throws {
        if losing == .record {
            losing = nil
            throw Lost()
        }
        try await ledger.markDeliveries(attempts, endpoint: endpoint)
    }

    func webhookDeliveries(bundleID: String?, appUserID: String?, limit: Int) async throws -> [WebhookDelivery] {
        try await ledger.webhookDeliveries(bundleID: bundleID, appUserID: appUserID, limit: limit)
    }

    func recordDuplicateSubscription(_ duplicate: DuplicateSubscription, at date: Date) async throws {
        try await ledger.recordDuplicateSubscription(duplicate, at: date)
    }
}
