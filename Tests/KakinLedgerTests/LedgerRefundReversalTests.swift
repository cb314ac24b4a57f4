import AppStoreModels
import Foundation
import GRDB
import KakinTestSupport
import PostgresNIO
import Testing

@testable import KakinLedger

/// A refund Apple reverses (REFUND_REVERSED) reinstates the transaction: the revocation is
/// cleared, what it took back is given back once, the figures lose the refund, and the order of
/// a refund and its reversal is the order of Apple's dates, not of their arrival.
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

    private func alice(_ store: any LedgerStore) async throws -> CustomerState {
        try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice")
    }

    /// The key of a reversal at `seconds` after the fixture's epoch.
    private func ms(_ seconds: TimeInterval) -> Int64 { LedgerTime.milliseconds(Fixture.at(seconds)) }

    /// The purchases marked for the subscription-metrics job.
    static func pendingMetrics(_ store: any LedgerStore) async throws -> [String] {
        let sql = "SELECT original_transaction_id FROM metric_pending ORDER BY original_transaction_id"
        if let sqlite = store as? SQLiteLedger {
            return try await sqlite.writer.read { db in try String.fetchAll(db, sql: sql) }
        }
        let postgres = try #require(store as? PostgresLedger)
        var purchases: [String] = []
        for try await purchase in try await postgres.client.query(PostgresQuery(unsafeSQL: sql)).decode(String.self) {
            purchases.append(purchase)
        }
        return purchases
    }

    @Test(
        "a reversal clears the revocation, gives back what the refund took (not its shortfall) once, and the metrics lose the refund",
        arguments: StoreKind.allCases)
    func reversalGivesBackWhatWasTaken(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            _ = try await store.spend(
                bundleID: Fixture.bundleID, appUserID: "alice", currency: "coins", amount: 30, idempotencyKey: "s1",
                at: Fixture.at(100))
            #expect(try await revoke(store, at: 200))
            #expect(try await alice(store).balances == ["coins": 0])
            while try await store.updateMetrics(limit: 100) > 0 {}
            #expect(try await Self.pendingMetrics(store).isEmpty)

            #expect(try await reinstate(store, at: 300))
            let customer = try await alice(store)
            #expect(customer.balances == ["coins": 70])
            let transaction = try #require(customer.transactions.first)
            #expect(transaction.revocationDate == nil)
            #expect(transaction.revocationReason == nil)
            #expect(customer.ledger.map(\.kind) == [.credit, .spend, .clawback, .credit])
            #expect(customer.ledger.map(\.amount) == [100, -30, -70, 70])
            #expect(customer.ledger.map(\.shortfall) == [0, 0, 30, 0])
            #expect(customer.ledger.last?.idempotencyKey == "reinstate:t1:coins:\(ms(300))")
            // A consumable's metrics are kept by the write itself: nothing is left for the job to
            // work out; its step only folds the rollup changes the write appended.
            #expect(try await Self.pendingMetrics(store).isEmpty)
            while try await store.updateMetrics(limit: 100) > 0 {}
            let day = DailyFigures.day(of: Fixture.at(0))
            let metrics = try await store.metrics(
                bundleID: Fixture.bundleID, environment: .sandbox, days: (day - 1)...(day + 1), now: Fixture.at(400))
            #expect(metrics.days.map { $0.counts[.refunds] }.reduce(0, +) == 0)
            #expect(metrics.days.map { $0.counts[.purchases] }.reduce(0, +) == 1)

            // The same reversal again, or an older one, or one of a transaction no longer revoked: nothing.
            #expect(try await reinstate(store, at: 300) == false)
            #expect(try await reinstate(store, at: 250) == false)
            #expect(try await reinstate(store, at: 400) == false)
            #expect(try await reinstate(store, "unknown", at: 400) == false)
            #expect(try await alice(store).balances == ["coins": 70])
            #expect(try await alice(store).ledger.count == 4)
            try expectLedgerMatchesBalances(try await alice(store))

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

    @Test(
        "refunded, reversed, refunded again and reversed again: each step takes or gives once, in the order of Apple's dates",
        arguments: StoreKind.allCases)
    func refundReversedTwice(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(try await revoke(store, at: 200))
            // A reversal signed before the revocation does not reverse it.
            #expect(try await reinstate(store, at: 150) == false)
            #expect(try await alice(store).transactions.first?.revocationDate == Fixture.at(200))
            #expect(try await reinstate(store, at: 300))
            #expect(try await alice(store).balances == ["coins": 100])

            // The reversed refund delivered again, late, or a smaller share of it: not applied again.
            #expect(try await revoke(store, at: 200) == false)
            #expect(try await revoke(store, share: 50_000, at: 250) == false)
            #expect(try await alice(store).transactions.first?.revocationDate == nil)
            #expect(try await alice(store).balances == ["coins": 100])

            // A refund after the reversal revokes and takes back again, under keys of its own.
            #expect(try await revoke(store, at: 400))
            #expect(try await alice(store).balances == ["coins": 0])
            #expect(try await alice(store).transactions.first?.revocationDate == Fixture.at(400))
            #expect(try await reinstate(store, at: 350) == false)
            #expect(try await reinstate(store, at: 500))
            #expect(try await reinstate(store, at: 500) == false)
            let customer = try await alice(store)
            #expect(customer.balances == ["coins": 100])
            #expect(customer.transactions.first?.revocationDate == nil)
            #expect(customer.ledger.map(\.amount) == [100, -100, 100, -100, 100])
            #expect(
                customer.ledger.map(\.idempotencyKey) == [
                    "grant:t1:coins", "clawback:t1:coins", "reinstate:t1:coins:\(ms(300))",
                    "clawback:t1:coins:reversed:\(ms(300))", "reinstate:t1:coins:\(ms(500))",
                ])
            try expectLedgerMatchesBalances(customer)
        }
    }

    @Test("a reversal that arrives before the refund it reverses keeps the late refund from revoking",
        arguments: StoreKind.allCases)
    func reversalBeforeItsRefund(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(try await reinstate(store, at: 300) == false)
            #expect(try await revoke(store, at: 200) == false)
            var customer = try await alice(store)
            #expect(customer.transactions.first?.revocationDate == nil)
            #expect(customer.balances == ["coins": 100])
            #expect(customer.ledger.map(\.amount) == [100])
            // A later refund still revokes.
            #expect(try await revoke(store, at: 400))
            customer = try await alice(store)
            #expect(customer.balances == ["coins": 0])
            #expect(customer.ledger.map(\.idempotencyKey) == ["grant:t1:coins", "clawback:t1:coins:reversed:\(ms(300))"])
        }
    }

    @Test("after a reversed partial refund, partial refunds take back their shares again", arguments: StoreKind.backends)
    func partialRefundsAfterAReversal(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(try await revoke(store, share: 50_000, at: 200))
            #expect(try await reinstate(store, at: 300))
            #expect(try await alice(store).balances == ["coins": 100])
            #expect(try await revoke(store, share: 50_000, at: 400))
            #expect(try await alice(store).balances == ["coins": 50])
            #expect(try await revoke(store, at: 500))
            let customer = try await alice(store)
            #expect(customer.balances == ["coins": 0])
            #expect(customer.ledger.map(\.amount) == [100, -50, 50, -50, -50])
            #expect(
                customer.ledger.map(\.idempotencyKey).suffix(2) == [
                    "clawback:t1:coins:50000:reversed:\(ms(300))", "clawback:t1:coins:reversed:\(ms(300))",
                ])
            try expectLedgerMatchesBalances(customer)
        }
    }

    @Test("a purchase recorded refunded grants when its refund is reversed", arguments: StoreKind.backends)
    func recordedRevokedGrantsOnReversal(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice", revokedAt: 200), grants: Fixture.coins)
            #expect(try await alice(store).balances.isEmpty)
            #expect(try await reinstate(store, at: 300))
            let customer = try await alice(store)
            #expect(customer.balances == ["coins": 100])
            #expect(customer.ledger.map(\.idempotencyKey) == ["grant:t1:coins"])
            #expect(customer.transactions.first?.revocationDate == nil)
        }
    }

    @Test("the daily figures lose the refund, and a subscription ends at its expiry again", arguments: StoreKind.allCases)
    func figuresLoseTheRefund(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let day = DailyFiguresTests.day
            let monthly = DailyFiguresTests.priced(
                Fixture.transaction("m1", user: "alice", product: "monthly", type: .autoRenewableSubscription), 4990,
                "USD")
            _ = try await store.record(monthly, grants: [])
            let before = try await DailyFiguresTests.totals(store).byDay
            #expect(before[0]?.purchases == 1)
            #expect(before[30]?.ends == 1)
            #expect(try await revoke(store, "m1", at: 2 * day))
            let refunded = try await DailyFiguresTests.totals(store).byDay
            #expect(refunded[2]?.refunds == 1)
            #expect(refunded[2]?.ends == 1)
            #expect(refunded[30] == nil)
            #expect(try await reinstate(store, "m1", at: 3 * day))
            #expect(try await DailyFiguresTests.totals(store).byDay == before)
            #expect(try await reinstate(store, "m1", at: 4 * day) == false)
            #expect(try await DailyFiguresTests.totals(store).byDay == before)
        }
    }

    private func expectLedgerMatchesBalances(
        _ customer: CustomerState, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let sums = Dictionary(grouping: customer.ledger, by: \.currency).mapValues { $0.reduce(0) { $0 + $1.amount } }
        #expect(sums == customer.balances, sourceLocation: sourceLocation)
    }
}
