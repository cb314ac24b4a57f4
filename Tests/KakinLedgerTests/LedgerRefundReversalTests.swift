import AppStoreModels
import Foundation
import KakinTestSupport
import Testing

@testable import KakinLedger

/// A refund Apple reverses (REFUND_REVERSED) reinstates the transaction: its events are written,
/// and the figures and metrics lose the refund. What it gives back, in the order of Apple's dates,
/// is the contract of ``PurchaseLedger`` (``PurchaseLedgerContractTests``).
@Suite("Ledger: reversed refunds")
struct LedgerRefundReversalTests {
    private func revoke(
        _ store: any LedgerStore, _ id: String = "t1", share: Int = RecordedTransaction.wholeShare,
        at seconds: TimeInterval
    ) async throws -> Bool {
        try await store.revoke(
            transactionID: id, at: Fixture.at(seconds), reason: 1, share: share, grants: Fixture.coins,
            policy: .clampAtZero)
    }

    private func reinstate(_ store: any LedgerStore, _ id: String = "t1", at seconds: TimeInterval) async throws -> Bool {
        try await store.reinstate(transactionID: id, reversedAt: Fixture.at(seconds), grants: Fixture.coins)
    }

    /// The key of a reversal at `seconds` after the fixture's epoch.
    private func ms(_ seconds: TimeInterval) -> Int64 { LedgerTime.milliseconds(Fixture.at(seconds)) }

    /// The purchases marked for the subscription-metrics job.
    static func pendingMetrics(_ store: any LedgerStore) async throws -> [String] {
        try await RawSQL.texts(store, "SELECT original_transaction_id FROM metric_pending ORDER BY original_transaction_id")
    }

    @Test(
        "a reversal writes its events, once, and the metrics lose the refund", arguments: StoreKind.allCases)
    func reversalEventsAndMetrics(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            _ = try await store.spend(
                bundleID: Fixture.bundleID, appUserID: "alice", currency: "coins", amount: 30, idempotencyKey: "s1",
                at: Fixture.at(100))
            #expect(try await revoke(store, at: 200))
            while try await store.updateMetrics(limit: 100) > 0 {}
            #expect(try await Self.pendingMetrics(store).isEmpty)

            #expect(try await reinstate(store, at: 300))
            #expect(try await reinstate(store, at: 300) == false)
            // A consumable's metrics are kept by the write itself: nothing is left for the job to
            // work out; its step only folds the rollup changes the write appended.
            #expect(try await Self.pendingMetrics(store).isEmpty)
            while try await store.updateMetrics(limit: 100) > 0 {}
            let day = DailyFigures.day(of: Fixture.at(0))
            let metrics = try await store.metrics(
                bundleID: Fixture.bundleID, environment: .sandbox, days: (day - 1)...(day + 1), now: Fixture.at(400))
            #expect(metrics.days.map { $0.counts[.refunds] }.reduce(0, +) == 0)
            #expect(metrics.days.map { $0.counts[.purchases] }.reduce(0, +) == 1)

            let events = try await store.dueEvents(endpoint: "https://hooks.example/r", now: Fixture.at(0), limit: 100)
            let reinstated = events.filter { $0.type == "transaction.reinstated" }
            #expect(reinstated.count == 1)
            let event = try #require(reinstated.first)
            let payload = try #require(try JSONSerialization.jsonObject(with: event.payload) as? [String: Any])
            #expect(payload["transactionId"] as? String == "t1")
            #expect(payload["originalTransactionId"] as? String == "t1")
            #expect(payload["revoked"] as? Bool == false)
            #expect((payload["reinstatedDate"] as? NSNumber)?.int64Value == ms(300))
            let credited = try events.filter { $0.type == "balance.credited" }.map { event in
                try JSONSerialization.jsonObject(with: event.payload) as? [String: Any] ?? [:]
            }
            #expect(credited.map { $0["idempotencyKey"] as? String } == ["grant:t1:coins", "reinstate:t1:coins:\(ms(300))"])
            #expect(credited.map { ($0["balance"] as? NSNumber)?.int64Value } == [100, 70])
        }
    }

    @Test("the daily figures lose the refund, and a subscription ends at its expiry again", arguments: StoreKind.allCases)
    func figuresLoseTheRefund(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let day = MetricsLedgerContractTests.day
            let monthly = MetricsLedgerContractTests.priced(
                Fixture.transaction("m1", user: "alice", product: "monthly", type: .autoRenewableSubscription), 4990,
                "USD")
            _ = try await store.record(monthly, grants: [])
            let before = try await MetricsLedgerContractTests.totals(store).byDay
            #expect(before[0]?.purchases == 1)
            #expect(before[30]?.ends == 1)
            #expect(try await revoke(store, "m1", at: 2 * day))
            let refunded = try await MetricsLedgerContractTests.totals(store).byDay
            #expect(refunded[2]?.refunds == 1)
            #expect(refunded[2]?.ends == 1)
            #expect(refunded[30] == nil)
            #expect(try await reinstate(store, "m1", at: 3 * day))
            #expect(try await MetricsLedgerContractTests.totals(store).byDay == before)
            #expect(try await reinstate(store, "m1", at: 4 * day) == false)
            #expect(try await MetricsLedgerContractTests.totals(store).byDay == before)
        }
    }
}
