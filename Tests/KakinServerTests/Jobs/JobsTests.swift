import AppStoreModels
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinServer
import KakinLedger
import KakinTestSupport
import StoreSandbox
import Testing

/// An endpoint that fails a given number of times, then accepts, keeping what it received.
actor RecordingExchange: HTTPExchange {
    var failuresLeft: Int
    var received: [(headers: [String: String], body: Data)] = []

    init(failures: Int) {
        failuresLeft = failures
    }

    func send(
        method: String, url: URL, headers: [String: String], body: Data?
    ) async throws -> (status: Int, body: Data) {
        received.append((headers, body ?? Data()))
        if failuresLeft > 0 {
            failuresLeft -= 1
            return (500, Data())
        }
        return (200, Data())
    }
}

@Suite struct JobsTests {
    @Test func webhooksAreSignedRetriedAndDeliveredOnce() async throws {
        let fixture = try await ServerFixture()
        let (_, jws) = try await fixture.buy("increasePoints")
        _ = try await fixture.service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
        let exchange = RecordingExchange(failures: 1)
        let endpoint = WebhookEndpoint(url: URL(string: "https://hooks.example.com/kakin")!, secret: "whsec")
        let clock = fixture.clock
        let dispatcher = WebhookDispatcher(
            outbox: fixture.store, endpoints: [endpoint], exchange: exchange, retryDelay: 60, now: { clock.now() })

        let backlog = try await dispatcher.backlog()
        #expect(backlog >= 2, "the backlog counts what is not delivered yet")
        let firstRound = try await dispatcher.deliverDue()
        let attempted = await exchange.received.count
        #expect(try await dispatcher.backlog() == 1, "the failed delivery still waits")
        #expect(attempted >= 2, "a transaction.recorded and a balance.credited event at least")
        #expect(firstRound == attempted - 1, "the first delivery failed")
        #expect(try await dispatcher.deliverDue() == 0, "the failed one waits for its retry time")
        clock.advance(by: 60)
        #expect(try await dispatcher.deliverDue() == 1)
        #expect(try await dispatcher.deliverDue() == 0, "everything delivered: nothing sent twice")
        #expect(try await dispatcher.backlog() == 0)

        let (headers, body) = try #require(await exchange.received.first)
        let header = try #require(headers["X-Kakin-Signature"])
        let parts = Dictionary(
            uniqueKeysWithValues: header.split(separator: ",").map {
                let pair = $0.split(separator: "=", maxSplits: 1)
                return (String(pair[0]), String(pair[1]))
            })
        let timestamp = try #require(parts["t"].flatMap { Int64($0) })
        #expect(parts["v1"] == WebhookDispatcher.signature(body: body, timestamp: timestamp, secret: "whsec"))
        let event = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(event["bundleId"] as? String == ServerFixture.bundleID)
        #expect(event["type"] as? String != nil)
        try await fixture.store.shutdown()
    }

    @Test("a burst of events is sent in one run, batch after batch, with each delivery's lag")
    func aBurstIsSentInOneRun() async throws {
        let fixture = try await ServerFixture()
        for index in 0..<70 {
            let (_, jws) = try await fixture.buy("increasePoints")
            _ = try await fixture.service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-\(index)")
        }
        let endpoint = WebhookEndpoint(url: URL(string: "https://hooks.example.com/kakin")!, secret: "whsec")
        let clock = fixture.clock
        let exchange = RecordingExchange(failures: 0)
        let dispatcher = WebhookDispatcher(outbox: fixture.store, endpoints: [endpoint], exchange: exchange, now: { clock.now() })
        let waiting = try await dispatcher.backlog()
        #expect(waiting >= 140, "a recorded and a credited event per purchase")
        clock.advance(by: 2)
        var lags: [TimeInterval] = []
        let delivered = try await dispatcher.deliverDue(limit: 50) { lags.append($0) }
        #expect(delivered == waiting, "every batch in the same run")
        #expect(lags.count == delivered)
        #expect(lags.allSatisfy { $0 >= 2 && $0 < 3 }, "the clock moved 2 s after the events were written")
        #expect(try await dispatcher.backlog() == 0)

        // An endpoint that fails stops the run after one batch: the rest waits for the next run.
        for index in 0..<30 {
            let (_, jws) = try await fixture.buy("increasePoints")
            _ = try await fixture.service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "late-\(index)")
        }
        let failing = RecordingExchange(failures: 1_000)
        let down = WebhookDispatcher(outbox: fixture.store, endpoints: [endpoint], exchange: failing, now: { clock.now() })
        #expect(try await down.deliverDue(limit: 10) == 0)
        #expect(await failing.received.count == 10)
        try await fixture.store.shutdown()
    }

    /// A monthly subscription uploaded by `user-1`, then two renewals and a refund of the latest
    /// while the server hears nothing: the first purchase and the refunded renewal.
    func renewedAndRefundedUnheard(_ fixture: ServerFixture) async throws -> (first: String, refunded: String) {
        let (monthly, jws) = try await fixture.buy("premium.monthly")
        _ = try await fixture.service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")
        fixture.clock.advance(by: 70 * 86_400)
        try await fixture.engine.processRenewals()
        let latest = try #require(await fixture.engine.transactions(of: "tester").last)
        try await fixture.engine.refund(latest.id)
        return (monthly.id, latest.id)
    }

    @Test func reconciliationHealsAMissedRefundAndRenewals() async throws {
        let fixture = try await ServerFixture()
        let (first, refunded) = try await renewedAndRefundedUnheard(fixture)

        try await fixture.withServerAPI { access in
            let reconciler = Reconciler(service: fixture.service, access: [ServerFixture.bundleID: access])
            let report = try await reconciler.reconcile(bundleID: ServerFixture.bundleID)
            #expect(report.notificationsRead == 0, "Apple sent nothing: no notification URL")
            // The first period ended with nothing heard since: its status shows a renewal the
            // ledger lacked, so the purchase's history brings in the renewals between.
            #expect(report.subscriptionsChecked == 1 && report.historiesRead == 1)
            #expect(report.transactionsRecorded >= 2)
            #expect(report.transactionsRevoked == 1)
            let again = try await reconciler.reconcile(bundleID: ServerFixture.bundleID)
            #expect(again.transactionsRecorded == 0 && again.transactionsRevoked == 0, "idempotent")
            #expect(again.subscriptionsChecked == 0, "the latest period is known now")
        }
        let customer = try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: "user-1")
        #expect(customer.transactions.count >= 3, "renewals inherit the owner of the original purchase")
        #expect(customer.transactions.contains { $0.transactionID == refunded && $0.revocationDate != nil })
        #expect(customer.transactions.first?.transactionID == first)
        try await fixture.store.shutdown()
    }

    @Test func aNotificationTheServerCannotAcceptDoesNotStopReconciliation() async throws {
        let fixture = try await ServerFixture()
        let history = Data(#"{"notificationHistory":[{"signedPayload":"not.a.jws"}],"hasMore":false}"#.utf8)
        let access = ServerAPIAccess(
            baseURL: URL(string: "https://api.example")!, keyID: "KEY", issuerID: "issuer", privateKey: .init())
        let reconciler = Reconciler(
            service: fixture.service, access: [ServerFixture.bundleID: access], exchange: AnsweringExchange(history))
        let report = try await reconciler.reconcile(bundleID: ServerFixture.bundleID)
        #expect(report.notificationsRead == 1 && report.notificationsNew == 0)
        let checkpoint = try await fixture.store.notificationCheckpoint(
            bundleID: ServerFixture.bundleID, environment: .sandbox)
        #expect(checkpoint == fixture.clock.now(), "the run went past it")
        try await fixture.store.shutdown()
    }

    @Test func anAppsPurchasesAreImportedByTheirOriginalTransactionIDs() async throws {
        let fixture = try await ServerFixture()
        // The server never saw these: they were made before it ran.
        let (first, _) = try await fixture.buy("removeAd")
        let (second, _) = try await fixture.buy("premium.monthly")
        try await fixture.withServerAPI { access in
            let reconciler = Reconciler(service: fixture.service, access: [ServerFixture.bundleID: access])
            var progress: [Int] = []
            let report = try await reconciler.importPurchases(
                bundleID: ServerFixture.bundleID, originalTransactionIDs: [first.id, second.id, "9999999999"]
            ) { done, _ in progress.append(done) }
            #expect(progress == [1, 2, 3])
            #expect(report.transactionsRecorded == 2)
            #expect(report.historiesRead == 2, "the second purchase was in the first one's history; the third is unknown")
            let again = try await reconciler.importPurchases(
                bundleID: ServerFixture.bundleID, originalTransactionIDs: [first.id])
            #expect(again.transactionsSeen == 2 && again.transactionsRecorded == 0, "an import again records nothing")
        }
        #expect(try await fixture.store.transaction(id: first.id) != nil)
        #expect(try await fixture.store.transaction(id: second.id) != nil)
        try await fixture.store.shutdown()
    }

    @Test func reconciliationReadsTheNotificationsTheServerMissedFromItsCheckpoint() async throws {
        let fixture = try await ServerFixture()
        let (_, refunded) = try await renewedAndRefundedUnheard(fixture)
        // Apple tried to send each notification, and none reached the server.
        let lost = URL(string: "https://lost.example/apple")!
        let sent = try await fixture.engine.deliverDueNotifications(to: lost, using: LostNotifications())
        #expect(sent.count >= 3)
        fixture.clock.advance(by: 60)

        try await fixture.withServerAPI { access in
            let reconciler = Reconciler(service: fixture.service, access: [ServerFixture.bundleID: access])
            let report = try await reconciler.reconcile(bundleID: ServerFixture.bundleID)
            #expect(report.notificationsRead == sent.count && report.notificationsNew == sent.count)
            #expect(report.transactionsRecorded == 0, "the notifications brought every transaction in")
            let checkpoint = try await fixture.store.notificationCheckpoint(
                bundleID: ServerFixture.bundleID, environment: .sandbox)
            #expect(checkpoint == fixture.clock.now())

            // The next run reads from the checkpoint less an hour's overlap: the same notifications
            // again, none new; the run after it, past the overlap, reads none.
            fixture.clock.advance(by: 2 * 3600)
            let again = try await reconciler.reconcile(bundleID: ServerFixture.bundleID)
            #expect(again.notificationsRead == sent.count && again.notificationsNew == 0)
            fixture.clock.advance(by: 2 * 3600)
            let later = try await reconciler.reconcile(bundleID: ServerFixture.bundleID)
            #expect(later.notificationsRead == 0)
        }
        let customer = try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: "user-1")
        #expect(customer.transactions.count >= 3)
        #expect(customer.transactions.contains { $0.transactionID == refunded && $0.revocationDate != nil })
        try await fixture.store.shutdown()
    }

    @Test("reconciliation asks nothing of purchases no event names: a ledger of purchases, no notification")
    func reconciliationAsksNothingOfPurchasesNoEventNames() async throws {
        let fixture = try await ServerFixture()
        for (index, product) in ["removeAd", "increasePoints", "increasePoints", "premium.monthly"].enumerated() {
            let (_, jws) = try await fixture.buy(product)
            _ = try await fixture.service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "u\(index)")
        }
        fixture.clock.advance(by: 86_400)
        try await fixture.withServerAPI { access in
            let exchange = CountingExchange()
            let reconciler = Reconciler(
                service: fixture.service, access: [ServerFixture.bundleID: access], exchange: exchange)
            let report = try await reconciler.reconcile(bundleID: ServerFixture.bundleID)
            #expect(report.subscriptionsChecked == 0 && report.historiesRead == 0)
            let paths = await exchange.paths
            #expect(paths.allSatisfy { $0.hasSuffix("/inApps/v1/notifications/history") }, "\(paths)")
            let environments = try fixture.service.app(ServerFixture.bundleID).environments.count
            #expect(paths.count == environments, "one page of each environment's history, which is empty")
        }
        try await fixture.store.shutdown()
    }

    @Test func theNotificationHistoryIsReadPageByPage() async throws {
        let fixture = try await ServerFixture()
        // More than a page (Apple's pages hold 20), none of which reached the server.
        for _ in 0..<45 { _ = try await fixture.buy("increasePoints") }
        let lost = URL(string: "https://lost.example/apple")!
        let sent = try await fixture.engine.deliverDueNotifications(to: lost, using: LostNotifications())
        #expect(sent.count == 45)
        fixture.clock.advance(by: 60)
        try await fixture.withServerAPI { access in
            let exchange = CountingExchange()
            let reconciler = Reconciler(
                service: fixture.service, access: [ServerFixture.bundleID: access], exchange: exchange)
            let report = try await reconciler.reconcile(bundleID: ServerFixture.bundleID)
            #expect(report.notificationsRead == 45 && report.notificationsNew == 45)
            #expect(report.transactionsRecorded == 0 && report.historiesRead == 0, "each notification carried its purchase")
            let environments = try fixture.service.app(ServerFixture.bundleID).environments.count
            #expect(await exchange.paths.count == 3 + (environments - 1), "three pages, one of the other environment")
        }
        let summary = try await fixture.store.reconciliationRuns(limit: 1).first
        #expect(summary?.counts.notificationsRead == 45 && summary?.state == .completed)
        try await fixture.store.shutdown()
    }

    @Test func aNotificationNamingAPurchaseTheLedgerLacksBringsItsHistory() async throws {
        let fixture = try await ServerFixture()
        let lost = URL(string: "https://lost.example/apple")!
        let (monthly, _) = try await fixture.buy("premium.monthly")
        // The purchase's notification was sent long ago, before the history Apple keeps.
        _ = try await fixture.engine.deliverDueNotifications(to: lost, using: LostNotifications())
        fixture.clock.advance(by: 200 * 86_400)
        try await fixture.engine.processRenewals()
        let renewals = try await fixture.engine.deliverDueNotifications(to: lost, using: LostNotifications())
        #expect(!renewals.isEmpty)
        fixture.clock.advance(by: 60)
        try await fixture.withServerAPI { access in
            let reconciler = Reconciler(service: fixture.service, access: [ServerFixture.bundleID: access])
            let report = try await reconciler.reconcile(bundleID: ServerFixture.bundleID)
            #expect(report.notificationsRead >= 1 && report.notificationsNew == report.notificationsRead)
            #expect(report.historiesRead == 1, "one history for the purchase the renewals named")
            #expect(report.subscriptionsChecked == 0, "the notifications said what happened")
        }
        #expect(try await fixture.store.transaction(id: monthly.id) != nil, "the first purchase came with the history")
        try await fixture.store.shutdown()
    }

    @Test("POST /v1/admin/reconcile answers 202 with the run; GET …/runs/{id} follows it")
    func reconcileOverHTTP() async throws {
        let fixture = try await ServerFixture()
        _ = try await renewedAndRefundedUnheard(fixture)
        try await fixture.withServerAPI { access in
            let runner = ReconciliationRunner(
                reconciler: Reconciler(service: fixture.service, access: [ServerFixture.bundleID: access]))
            let http = KakinServerHTTP(service: fixture.service, signingKey: fixture.serverKey, reconciliations: runner)
            let secret: HTTPFields = [.authorization: "Bearer sk_test"]
            try await Application(router: http.router()).test(.router) { client in
                let started = try await client.execute(
                    uri: "/v1/admin/reconcile?bundleId=\(ServerFixture.bundleID)", method: .post, headers: secret)
                #expect(started.status == .accepted)
                let run = try JSONSerialization.jsonObject(with: Data(buffer: started.body)) as? [String: Any]
                let id = try #require(run?["id"] as? Int)
                #expect(run?["state"] as? String == "running" && run?["bundleId"] as? String == ServerFixture.bundleID)
                #expect(started.headers[.location] == "/v1/admin/reconcile/runs/\(id)")
                _ = try await runner.wait(for: Int64(id))

                let followed = try await client.execute(
                    uri: "/v1/admin/reconcile/runs/\(id)", method: .get, headers: secret)
                #expect(followed.status == .ok)
                let ended = try JSONSerialization.jsonObject(with: Data(buffer: followed.body)) as? [String: Any]
                #expect(ended?["state"] as? String == "completed" && ended?["finishedAt"] as? Int != nil)
                #expect(ended?["subscriptionsChecked"] as? Int == 1, "the counts sit beside the other fields")
                #expect(ended?["transactionsRevoked"] as? Int == 1)

                for (path, status) in [("runs/\(id + 1)", HTTPResponse.Status.notFound), ("runs/seven", .badRequest)] {
                    let answer = try await client.execute(uri: "/v1/admin/reconcile/\(path)", method: .get, headers: secret)
                    #expect(answer.status == status, "\(path)")
                }
                let publishable = try await client.execute(
                    uri: "/v1/admin/reconcile/runs/\(id)", method: .get,
                    headers: [HTTPField.Name("X-Kakin-Key")!: "pk_test"])
                #expect(publishable.status == .unauthorized, "the secret key only")
            }
        }
        try await fixture.store.shutdown()
    }

    @Test func aRunIsRecordedAsItStartsAndFollowedToItsEnd() async throws {
        let fixture = try await ServerFixture()
        _ = try await renewedAndRefundedUnheard(fixture)
        try await fixture.withServerAPI { access in
            let reconciler = Reconciler(service: fixture.service, access: [ServerFixture.bundleID: access])
            let runner = ReconciliationRunner(reconciler: reconciler)
            let started = try await runner.start(bundleID: ServerFixture.bundleID)
            #expect(started.state == .running && started.finishedAt == nil)
            let ended = try #require(try await runner.wait(for: started.id))
            #expect(ended.state == .completed && ended.finishedAt != nil)
            #expect(ended.counts.subscriptionsChecked == 1 && ended.counts.transactionsRevoked == 1)
            #expect(try await fixture.store.reconciliationRun(id: started.id) == ended)
            #expect(try await fixture.store.reconciliationRuns(limit: 5).first == ended)

            // An app without a key cannot start; a run left running by a stopped server is failed
            // by the app's next run once it has not moved for the while allowed.
            await #expect(throws: ServerError.self) { try await runner.start(bundleID: "com.example.unknown") }
            let orphan = try await fixture.store.startReconciliation(
                bundleID: ServerFixture.bundleID, at: fixture.clock.now(), abandonedAfter: Reconciler.abandonedAfter).run
            fixture.clock.advance(by: Reconciler.abandonedAfter + 1)
            // A run going on (another server's, say) is answered, and not doubled by the periodic job.
            let elsewhere = try await fixture.store.startReconciliation(
                bundleID: ServerFixture.bundleID, at: fixture.clock.now(), abandonedAfter: Reconciler.abandonedAfter).run
            #expect(try await runner.start(bundleID: ServerFixture.bundleID) == elsewhere)
            await #expect(throws: ServerError.self) { try await reconciler.reconcile(bundleID: ServerFixture.bundleID) }
            fixture.clock.advance(by: Reconciler.abandonedAfter + 1)
            let next = try await runner.start(bundleID: ServerFixture.bundleID)
            let failed = try #require(try await fixture.store.reconciliationRun(id: orphan.id))
            #expect(failed.state == .failed && failed.failure?.contains("stopped") == true)
            #expect(try await runner.wait(for: next.id)?.state == .completed)
        }
        try await fixture.store.shutdown()
    }
}

/// A notification endpoint that never answers.
struct LostNotifications: NotificationTransport {
    func post(_ body: Data, to url: URL) async -> SendAttemptResult { .timedOut }
}

/// Answers every request with 200 and the same body.
private struct AnsweringExchange: HTTPExchange {
    let body: Data

    init(_ body: Data) {
        self.body = body
    }

    func send(method: String, url: URL, headers: [String: String], body: Data?) async throws -> (status: Int, body: Data) {
        (200, self.body)
    }
}

/// Carries requests over URLSession, keeping the path of each.
private actor CountingExchange: HTTPExchange {
    var paths: [String] = []
    let inner = URLSessionExchange()

    func send(method: String, url: URL, headers: [String: String], body: Data?) async throws -> (status: Int, body: Data) {
        let answer = try await self.answer(method: method, url: url, headers: headers, body: body)
        return (answer.status, answer.body)
    }

    func answer(method: String, url: URL, headers: [String: String], body: Data?) async throws -> HTTPAnswer {
        paths.append(url.path)
        return try await inner.answer(method: method, url: url, headers: headers, body: body)
    }
}
