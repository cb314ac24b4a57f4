import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinLedger
import KakinServer
import KakinTestSupport
import StoreSandbox
import Testing

/// The purchase service over the in-memory implementations of the ledger's roles: an app's
/// uploads verified, recorded and answered without a database.
@Suite struct PurchaseServiceOverInMemoryRolesTests {
    /// The example app's service over `ledger` and the other roles in memory; the figures and
    /// metrics, which no upload reads, refuse every call.
    private func service(over ledger: InMemoryLedger, clock: SandboxClock) throws -> PurchaseService {
        PurchaseService(
            purchases: ledger, customers: ledger, balances: ledger, appleCalls: InMemoryAppleCallLedger(),
            figures: NoFigures(), outbox: InMemoryOutboxLedger(), upkeep: InMemoryLedgerOperations(),
            sessions: InMemorySessionLedger(), apps: [ExampleApp.configuration(root: ServerFixture.authority.root)],
            grants: try ExampleApp.grants(), productTypes: [:], clawbackPolicy: .clampAtZero,
            verifyReceiptClient: URLSessionVerifyReceiptClient(), exchange: URLSessionExchange(),
            ocspTransport: URLSessionOCSPTransport.cancellable, now: { clock.now() }, metrics: nil,
            logger: KakinServerHTTP.quietLogger)
    }

    @Test("an upload is recorded and credited once; its bytes again are a duplicate, another customer is refused")
    func uploadRecordedOnce() async throws {
        let clock = SandboxClock.manual(at: ServerFixture.start)
        let engine = try ExampleSandbox.engine(
            catalog: ExampleApp.catalog(), authority: ServerFixture.authority, clock: clock)
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
}

/// Figures and metrics no test here reads: every call is refused.
private struct NoFigures: MetricsLedger {
    private var refused: LedgerStoreError { LedgerStoreError(.unavailable, "these tests keep no figures") }

    func dailyFigures(bundleID: String, days: Range<Int>, now: Date) async throws -> DailyFiguresPeriod {
        throw refused
    }

    func updateMetrics(limit: Int) async throws -> Int { throw refused }

    func metrics(
        bundleID: String, environment: AppStoreEnvironment, days: ClosedRange<Int>, now: Date
    ) async throws -> MetricsReading {
        throw refused
    }

    func churnedSubscriptions(
        bundleID: String, environment: AppStoreEnvironment, periods: [MetricPeriod]
    ) async throws -> [[MetricCount]] {
        throw refused
    }
}
