import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinLedger
import KakinServer
import KakinTestSupport
import StoreSandbox
import Testing

/// The purchase service over the in-memory implementations of the ledger's roles: an app's
/// uploads verified, recorded and answered, and Apple's retention requests answered and
/// recorded, without a database.
@Suite struct PurchaseServiceOverInMemoryRolesTests {
    /// The service of `app` (the example app by default) over `ledger` (purchases, customers,
    /// balances, figures, metrics and retention answers) and the other roles in memory.
    private func service(
        over ledger: InMemoryLedger, clock: SandboxClock,
        app: AppConfiguration = ExampleApp.configuration(root: ServerFixture.authority.root)
    ) throws -> PurchaseService {
        PurchaseService(
            purchases: ledger, customers: ledger, balances: ledger, appleCalls: InMemoryAppleCallLedger(),
            figures: ledger, outbox: InMemoryOutboxLedger(), upkeep: InMemoryLedgerOperations(),
            sessions: InMemorySessionLedger(), apps: [app], grants: try ExampleApp.grants(), productTypes: [:],
            clawbackPolicy: .clampAtZero, verifyReceiptClient: URLSessionVerifyReceiptClient(),
            exchange: URLSessionExchange(), ocspTransport: URLSessionOCSPTransport.cancellable, now: { clock.now() },
            metrics: nil, logger: KakinServerHTTP.quietLogger, retention: ledger)
    }

    /// A sandbox App Store selling the example catalog, on a clock the test moves.
    private func sandbox() throws -> (SandboxClock, SandboxEngine) {
        let clock = SandboxClock.manual(at: ServerFixture.start)
        let engine = try ExampleSandbox.engine(
            catalog: ExampleApp.catalog(), authority: ServerFixture.authority, clock: clock)
        return (clock, engine)
    }

    @Test("an upload is recorded and credited once; its bytes again are a duplicate, another customer is refused")
    func uploadRecordedOnce() async throws {
        let (clock, engine) = try sandbox()
        let ledger = InMemoryLedger()
        let service = try service(over: ledger, clock: clock)
        let (transaction, jws) = try await engine.buy("increasePoints", at: clock.now())

        let uploads = try await concurrently(20) { _ in
            try await service.submit(
                jws, bundleID: ServerFixture.bundleID, appUserID: "user-1", recent: 1, withJWS: false)
        }
        #expect(uploads.filter { $0.outcome.isNew }.count == 1)
        #expect(uploads.allSatisfy { $0.summary.balances == ["points": 100] && $0.summary.transactionCount == 1 })
        #expect(
            try await ledger.signedTransaction(digest: SignedDigest(jws))
                == KnownSignedTransaction(
                    transactionID: transaction.id, bundleID: ServerFixture.bundleID, environment: .sandbox,
                    appUserID: "user-1"))

        // The same bytes again are answered from the ledger: nothing changes.
        let again = try await service.submit(
            jws, bundleID: ServerFixture.bundleID, appUserID: "user-1", recent: 0, withJWS: false)
        #expect(!again.outcome.isNew && again.summary.balances == ["points": 100])
        let refused = await #expect(throws: ServerError.self) {
            try await service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "user-2")
        }
        #expect(refused?.cause == "ownedByAnotherCustomer")

        #expect(
            try await service.spend(
                bundleID: ServerFixture.bundleID, appUserID: "user-1", currency: "points", amount: 30,
                idempotencyKey: "s1") == .spent(balance: 70))
        let customer = try await service.customer(bundleID: ServerFixture.bundleID, appUserID: "user-1")
        #expect(customer.transactions.map(\.transactionID) == [transaction.id])
        #expect(customer.ledger.map(\.amount) == [100, -30])
        #expect(customer.balances == ["points": 70])
        #expect(try await ledger.customer(bundleID: ServerFixture.bundleID, appUserID: "user-2").transactions.isEmpty)
    }

    @Test("uploads over two days: the daily figures at once, the metrics once the job ran, as the sales add up")
    func figuresAndMetrics() async throws {
        let (clock, engine) = try sandbox()
        let service = try service(over: InMemoryLedger(), clock: clock)
        let firstDay = DailyFigures.day(of: clock.now())
        // Two customers buy three times on the first day; the second buys again the next day.
        var sold: [(user: String, transaction: SandboxTransaction)] = []
        for (day, product, user) in [
            (0, "increasePoints", "user-1"), (0, "increasePoints", "user-1"), (0, "unlock", "user-2"),
            (1, "credits5", "user-2"),
        ] {
            if DailyFigures.day(of: clock.now()) < firstDay + day { _ = clock.advance(by: 86_400) }
            let (transaction, jws) = try await engine.buy(product, tester: user, at: clock.now())
            _ = try await service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: user)
            sold.append((user, transaction))
        }

        // What the sales add up to, by day from the first: purchases, revenue per currency, and
        // the customers whose first paid purchase it was.
        var purchases = [0, 0]
        var revenue: [String: [Double]] = [:]
        var newCustomers = [0.0, 0.0]
        var paying = Set<String>()
        for (user, transaction) in sold {
            let day = DailyFigures.day(of: transaction.purchaseDate) - firstDay
            purchases[day] += 1
            revenue[transaction.currency, default: [0, 0]][day] += Double(transaction.priceMilliunits)
            if paying.insert(user).inserted { newCustomers[day] += 1 }
        }
        #expect(purchases == [3, 1] && newCustomers == [2, 0])

        // The daily figures are kept with each upload.
        let figures = try await service.dailyFigures(
            bundleID: ServerFixture.bundleID, days: firstDay..<(firstDay + 2), now: clock.now())
        var (figurePurchases, figureRevenue) = ([0, 0], [String: [Double]]())
        for row in figures.figures {
            figurePurchases[row.day - firstDay] += row.purchases
            figureRevenue[row.currency ?? "", default: [0, 0]][row.day - firstDay] += Double(row.revenue)
        }
        #expect(figurePurchases == purchases && figureRevenue == revenue)

        // The metrics are read as the job last left them: nothing until it runs.
        let query = MetricQuery(
            bundleID: ServerFixture.bundleID, environment: .sandbox, from: firstDay, through: firstDay + 1)
        #expect(try await service.metric(.revenue, query).series.isEmpty)
        #expect(try await service.updateMetrics() > 0)
        let answers = try await service.metrics([.revenue, .newCustomers], query)
        let series = try #require(answers[.revenue]).series
        #expect(
            Dictionary(uniqueKeysWithValues: series.map { ($0.currency ?? "", $0.points.compactMap(\.value)) })
                == revenue)
        #expect(try #require(answers[.newCustomers]).series.map { $0.points.compactMap(\.value) } == [newCustomers])
    }

    @Test("a retention answer is recorded once per request, and the saves read whether the subscriber stayed")
    func retentionAnswers() async throws {
        let (clock, engine) = try sandbox()
        let ledger = InMemoryLedger()
        var app = ExampleApp.configuration(root: ServerFixture.authority.root)
        app.retention = RetentionPolicy(rules: [
            RetentionRule(name: "trial", states: [.trial], answer: .message(messageID: "trial-message"))
        ])
        let service = try service(over: ledger, clock: clock, app: app)
        // A free week, then a paid month.
        let (purchase, jws) = try await engine.buy("premium.monthly", tester: "alice", at: clock.now())
        _ = try await service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "alice")

        let request = try RetentionAnswerTests.request(
            signedBy: engine, at: clock.now(), originalTransactionID: purchase.originalID)
        #expect(try await service.answerRetentionRequest(request).rule?.name == "trial")
        // Apple sends the same request again: answered again, recorded once.
        #expect(try await service.answerRetentionRequest(request).rule?.name == "trial")
        let decisions = try await ledger.retentionDecisions(
            bundleID: ServerFixture.bundleID, environment: .sandbox, limit: 10, after: nil, now: clock.now())
        #expect(decisions.count == 1)
        #expect(decisions.first?.appUserID == "alice" && decisions.first?.outcome == .pending)
        #expect(decisions.first?.decision.messageID == "trial-message")

        // The trial converts: its first paid month, recorded after the answer, is a stay.
        let today = DailyFigures.day(of: clock.now())
        _ = try await engine.advanceClock(by: 10 * 86_400)
        for record in try await engine.queueNotifications() {
            _ = try await service.receiveNotification(ResponseBodyV2(signedPayload: record.signedPayload))
        }
        let saves = try await service.retentionSaves(
            bundleID: ServerFixture.bundleID, environment: .sandbox, days: today...(today + 10))
        #expect(saves == [RetentionSaves(messageID: "trial-message", shown: 1, stayed: 1, left: 0, pending: 0)])
    }
}
