import Foundation
import KakinTestSupport
import Testing

@testable import KakinLedger

/// Spend idempotency keys belong to their app: two apps using the same key spend once each, and
/// spends recorded before keys were per app keep answering their retries.
@Suite("Ledger: spend keys per app")
struct LedgerSpendKeyTests {
    static let otherApp = "com.example.other"

    /// Gives alice 100 coins in each of the two apps.
    static func fund(_ store: any LedgerStore) async throws {
        _ = try await store.record(Fixture.transaction("a1", user: "alice"), grants: Fixture.coins)
        var other = Fixture.transaction("b1", user: "alice")
        other.bundleID = otherApp
        _ = try await store.record(other, grants: Fixture.coins)
    }

    static func spend(
        _ store: any LedgerStore, app: String, _ amount: Int64, key: String
    ) async throws -> SpendOutcome {
        try await store.spend(
            bundleID: app, appUserID: "alice", currency: "coins", amount: amount, idempotencyKey: key,
            at: Fixture.at(100))
    }

    @Test(
        "two apps spending with the same key each spend once; the same app retrying is answered alreadySpent",
        arguments: StoreKind.allCases)
    func keysArePerApp(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            try await Self.fund(store)
            #expect(try await Self.spend(store, app: Fixture.bundleID, 30, key: "order-1") == .spent(balance: 70))
            #expect(try await Self.spend(store, app: Self.otherApp, 30, key: "order-1") == .spent(balance: 70))
            #expect(
                try await Self.spend(store, app: Fixture.bundleID, 30, key: "order-1") == .alreadySpent(balance: 70))
            #expect(try await Self.spend(store, app: Self.otherApp, 30, key: "order-1") == .alreadySpent(balance: 70))
            // Within one app, the key still names one spend.
            await #expect(throws: LedgerStoreError(.idempotencyKeyReused)) {
                try await Self.spend(store, app: Self.otherApp, 31, key: "order-1")
            }
            let first = try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            let second = try await store.customer(bundleID: Self.otherApp, appUserID: "alice")
            #expect(first.balances == ["coins": 70] && second.balances == ["coins": 70])
            #expect(
                first.ledger.filter { $0.kind == .spend }.map(\.idempotencyKey) == ["spend:\(Fixture.bundleID):order-1"]
            )
            #expect(
                second.ledger.filter { $0.kind == .spend }.map(\.idempotencyKey) == ["spend:\(Self.otherApp):order-1"])
            try await expectLedgerMatchesBalances(store, user: "alice")
        }
    }

    @Test(
        "spends recorded under the keys every app shared are keyed per app by the migration, and their retries still answer",
        arguments: StoreKind.allCases)
    func migrationKeysEarlierSpendsPerApp(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            try await Self.fund(store)
            #expect(try await Self.spend(store, app: Fixture.bundleID, 30, key: "order-1") == .spent(balance: 70))
            #expect(try await Self.spend(store, app: Self.otherApp, 20, key: "order-2") == .spent(balance: 80))
            // The ledger as the earlier version left it: `spend:<key>`, and the migration not applied.
            try await RawSQL.execute(
                store,
                """
                UPDATE ledger_entries SET idempotency_key = 'spend:' || substr(idempotency_key, length(bundle_id) + 8)
                WHERE kind = 'spend'
                """)
            let migrations = store is PostgresLedger ? "migrations WHERE id" : "grdb_migrations WHERE identifier"
            try await RawSQL.execute(store, "DELETE FROM \(migrations) = '0022_spend_keys_per_app'")
            let before = try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            #expect(before.ledger.filter { $0.kind == .spend }.map(\.idempotencyKey) == ["spend:order-1"])

            try await store.migrate()
            let first = try await store.customer(bundleID: Fixture.bundleID, appUserID: "alice")
            let second = try await store.customer(bundleID: Self.otherApp, appUserID: "alice")
            #expect(
                first.ledger.filter { $0.kind == .spend }.map(\.idempotencyKey) == ["spend:\(Fixture.bundleID):order-1"]
            )
            #expect(
                second.ledger.filter { $0.kind == .spend }.map(\.idempotencyKey) == ["spend:\(Self.otherApp):order-2"])
            #expect(first.ledger.filter { $0.kind == .credit }.map(\.idempotencyKey) == ["grant:a1:coins"])
            #expect(
                try await Self.spend(store, app: Fixture.bundleID, 30, key: "order-1") == .alreadySpent(balance: 70))
            #expect(try await Self.spend(store, app: Self.otherApp, 20, key: "order-2") == .alreadySpent(balance: 80))
            #expect(try await Self.spend(store, app: Self.otherApp, 30, key: "order-1") == .spent(balance: 50))
            #expect(try await Self.spend(store, app: Fixture.bundleID, 20, key: "order-2") == .spent(balance: 50))
            try await expectLedgerMatchesBalances(store, user: "alice")
        }
    }
}
