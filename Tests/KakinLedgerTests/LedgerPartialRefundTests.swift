import AppStoreModels
import Foundation
import KakinLedger
import KakinTestSupport
import Testing

@Suite("Ledger: prorated refunds")
struct LedgerPartialRefundTests {
    private func revoke(
        _ store: any LedgerStore, _ id: String, share: Int, at seconds: TimeInterval = 200,
        policy: ClawbackPolicy = .clampAtZero
    ) async throws -> Bool {
        try await store.revoke(
            transactionID: id, at: Fixture.at(seconds), reason: 0, share: share, grants: Fixture.coins, policy: policy)
    }

    private func clawbacks(_ store: any LedgerStore, user: String = "alice") async throws -> [LedgerEntry] {
        try await store.customer(bundleID: Fixture.bundleID, appUserID: user).ledger.filter { $0.kind == .clawback }
    }

    @Test(
        "a 50 % refund takes back 50 of 100 points once; a full refund then takes the other 50",
        arguments: StoreKind.allCases)
    func halfThenFull(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(try await revoke(store, "t1", share: 50_000))
            var alice = try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alice.balances == ["coins": 50])
            #expect(alice.transactions.first?.revocationDate == Fixture.at(200))
            var lines = try await clawbacks(store)
            #expect(lines.map(\.amount) == [-50])
            #expect(lines.map(\.idempotencyKey) == ["clawback:t1:coins:50000"])

            // The same refund delivered again, or a smaller share, takes nothing more.
            #expect(try await revoke(store, "t1", share: 50_000, at: 210) == false)
            #expect(try await revoke(store, "t1", share: 25_000, at: 220) == false)
            #expect(try await clawbacks(store).count == 1)
            #expect(try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice").balances == ["coins": 50])

            // The whole refund takes back only the rest, and then nothing can be revoked again.
            #expect(try await revoke(store, "t1", share: 100_000, at: 300))
            alice = try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(alice.balances == ["coins": 0])
            #expect(alice.transactions.first?.revocationDate == Fixture.at(300))
            lines = try await clawbacks(store)
            #expect(lines.map(\.amount) == [-50, -50])
            #expect(lines.map(\.idempotencyKey) == ["clawback:t1:coins:50000", "clawback:t1:coins"])
            #expect(try await revoke(store, "t1", share: 100_000, at: 310) == false)
            #expect(
                try await store.revoke(
                    transactionID: "t1", at: Fixture.at(320), reason: 0, grants: Fixture.coins, policy: .clampAtZero)
                    == false)
            try await expectLedgerMatchesBalances(store, user: "alice")
        }
    }

    @Test("a share rounds down to whole units, and later refunds make up the rest", arguments: StoreKind.backends)
    func roundingDown(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(try await revoke(store, "t1", share: 33_333))
            #expect(try await clawbacks(store).map(\.amount) == [-33])
            #expect(try await revoke(store, "t1", share: 66_667, at: 250))
            #expect(try await clawbacks(store).map(\.amount) == [-33, -33])
            #expect(try await revoke(store, "t1", share: 100_000, at: 300))
            #expect(try await clawbacks(store).map(\.amount) == [-33, -33, -34])
            try await expectLedgerMatchesBalances(store, user: "alice")
        }
    }

    @Test("a shortfall is not asked for again by a larger refund", arguments: StoreKind.backends)
    func shortfallCounts(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            _ = try await store.spend(
                bundleID: Fixture.bundleID, appUserID: "alice", currency: "coins", amount: 80, idempotencyKey: "s1",
                at: Fixture.at(100))
            #expect(try await revoke(store, "t1", share: 50_000))
            var lines = try await clawbacks(store)
            #expect(lines.map(\.amount) == [-20])
            #expect(lines.map(\.shortfall) == [30])
            #expect(try await revoke(store, "t1", share: 100_000, at: 300))
            lines = try await clawbacks(store)
            #expect(lines.map(\.amount) == [-20, 0])
            #expect(lines.map(\.shortfall) == [30, 50])
            try await expectLedgerMatchesBalances(store, user: "alice")
        }
    }

    @Test("the revocation event carries the share", arguments: StoreKind.backends)
    func eventCarriesShare(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(try await revoke(store, "t1", share: 50_000))
            #expect(try await revoke(store, "t1", share: 100_000, at: 300))
            let events = try await store.dueEvents(endpoint: "https://hooks.example/a", now: Fixture.at(0), limit: 100)
            let revoked = events.filter { $0.type == "transaction.revoked" }
            let shares = try revoked.map { event in
                (try JSONSerialization.jsonObject(with: event.payload) as? [String: Any])?["revocationPercentage"]
                    as? Int
            }
            #expect(shares == [50_000, 100_000])
        }
    }

    @Test("a share outside 1…100000 is refused", arguments: [0, -1, 100_001])
    func invalidShare(share: Int) async throws {
        try await withLedgerStore(.memory) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            await #expect(throws: LedgerStoreError(.invalidArgument)) { try await revoke(store, "t1", share: share) }
        }
    }

    @Test("the revoked share follows Apple's revocationType and revocationPercentage")
    func revokedShare() {
        func share(_ type: RevocationType, _ percentage: Int) -> Int {
            RecordedTransaction(
                transactionID: "t", originalTransactionID: "t", bundleID: "b", productID: "p", productType: .consumable,
                purchaseDate: Fixture.at(0), revocationType: type, revocationPercentage: percentage,
                environment: .sandbox, source: .app, recordedAt: Fixture.at(0)
            ).revokedShare
        }
        #expect(share(.refundProrated, 50_000) == 50_000)
        #expect(share(.refundFull, 100_000) == 100_000)
        #expect(share(.refundProrated, 0) == 100_000, "a share Apple could not mean is the whole")
    }
}
