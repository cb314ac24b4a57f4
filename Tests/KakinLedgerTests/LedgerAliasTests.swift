import Foundation
import KakinCore
import KakinLedger
import KakinTestSupport
import Testing

@Suite("Ledger: anonymous customers becoming identified ones")
struct LedgerAliasTests {
    private let anonymous = AnonymousAppUserID.prefix + "0123456789abcdef0123456789abcdef"
    private let hook = "https://hooks.example/aliases"

    private func customer(_ store: any LedgerStore, _ user: String) async throws -> CustomerState {
        try await store.customer(bundleID: Fixture.bundleID, appUserID: user)
    }

    private func alias(
        _ store: any LedgerStore, _ from: String, to: String, transfers: Bool = false
    ) async throws -> CustomerAliasOutcome {
        try await store.alias(
            bundleID: Fixture.bundleID, anonymousID: from, to: to, transfersOwnership: transfers, at: Fixture.at(500))
    }

    /// The payloads of the events of `type`, as a sender looking at `now` takes them (a second look
    /// at the same instant sees none).
    private func events(
        _ store: any LedgerStore, _ type: String, now: TimeInterval = 1000
    ) async throws -> [[String: Any]] {
        try await store.dueEvents(endpoint: hook, now: Fixture.at(now), limit: 1000).filter { $0.type == type }.map {
            try #require(try JSONSerialization.jsonObject(with: $0.payload) as? [String: Any])
        }
    }

    @Test(
        "purchases, ledger lines and balances move once; the same call again changes nothing",
        arguments: StoreKind.allCases)
    func movesOnce(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("c1", user: anonymous), grants: Fixture.coins)
            _ = try await store.record(
                Fixture.transaction("n1", user: anonymous, product: "removeAds", type: .nonConsumable), grants: [])
            #expect(
                try await store.spend(
                    bundleID: Fixture.bundleID, appUserID: anonymous, currency: "coins", amount: 30,
                    idempotencyKey: "s1", at: Fixture.at(20)) == .spent(balance: 70))
            // The identified customer has coins of their own: the balances add up.
            _ = try await store.record(Fixture.transaction("c2", user: "alice"), grants: Fixture.coins)

            let first = try await alias(store, anonymous, to: "alice")
            #expect(
                first
                    == .aliased(
                        CustomerAliasMove(created: true, transactionIDs: ["c1", "n1"], balances: ["coins": 70])))
            let alice = try await customer(store, "alice")
            #expect(Set(alice.transactions.map(\.transactionID)) == ["c1", "c2", "n1"])
            #expect(alice.balances == ["coins": 170])
            #expect(alice.ledger.count == 3)
            try await expectLedgerMatchesBalances(store, user: "alice")
            let left = try await customer(store, anonymous)
            #expect(left.transactions.isEmpty && left.ledger.isEmpty && left.balances.isEmpty)
            #expect(try await store.aliasedCustomer(bundleID: Fixture.bundleID, anonymousID: anonymous) == "alice")

            // Again: nothing moves, nothing is doubled, no second event.
            #expect(try await alias(store, anonymous, to: "alice") == .aliased(CustomerAliasMove(created: false)))
            #expect(try await customer(store, "alice").balances == ["coins": 170])
            let aliased = try await events(store, "customer.aliased")
            #expect(aliased.count == 1)
            #expect(aliased.first?["alias"] as? String == CustomerIDRedaction.redacted(anonymous))
            #expect(aliased.first?["appUserId"] as? String == "alice")
            #expect(aliased.first?["transactionIds"] as? [String] == ["c1", "n1"])
            #expect(aliased.first?["balances"] as? [String: Int] == ["coins": 70])
            #expect(aliased.first?["created"] as? Bool == true)
        }
    }

    @Test(
        "an anonymous ID the app's ledger has never seen records nothing: no alias, no event",
        arguments: StoreKind.allCases)
    func unseenAnonymousIDRecordsNothing(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("c1", user: "alice"), grants: Fixture.coins)
            // Seen in another app only: still unseen in this one.
            var elsewhere = Fixture.transaction("x1", user: anonymous)
            elsewhere.bundleID = "com.example.other"
            _ = try await store.record(elsewhere, grants: Fixture.coins)
            let outcome = try await alias(store, anonymous, to: "alice")
            #expect(outcome == .aliased(CustomerAliasMove(created: false)))
            if case .aliased(let move) = outcome { #expect(!move.changedAnything) }
            #expect(try await store.aliasedCustomer(bundleID: Fixture.bundleID, anonymousID: anonymous) == nil)
            // Nothing was claimed: another customer's alias is not refused, and is not recorded either.
            #expect(try await alias(store, anonymous, to: "bob") == .aliased(CustomerAliasMove(created: false)))
            #expect(try await store.aliasedCustomer(bundleID: Fixture.bundleID, anonymousID: anonymous) == nil)
            #expect(try await customer(store, "alice").balances == ["coins": 100])
            #expect(
                try await store.aliasedCustomer(bundleID: "com.example.other", anonymousID: anonymous) == nil,
                "the other app's customer was not touched")
            let written = try await store.dueEvents(endpoint: hook, now: Fixture.at(1000), limit: 1000)
            #expect(
                written.map(\.type) == [
                    "transaction.recorded", "balance.credited", "transaction.recorded", "balance.credited",
                ], "the purchases' events, and no customer.aliased")

            // Once it has bought something here, it is seen, and the alias is recorded.
            _ = try await store.record(Fixture.transaction("c2", user: anonymous), grants: Fixture.coins)
            #expect(
                try await alias(store, anonymous, to: "bob")
                    == .aliased(CustomerAliasMove(created: true, transactionIDs: ["c2"], balances: ["coins": 100])))
            #expect(try await events(store, "customer.aliased", now: 2000).count == 1)
        }
    }

    @Test("an anonymous ID seen only through its app download is aliased", arguments: StoreKind.backends)
    func appDownloadIsSeen(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            try await store.linkAppTransaction(
                bundleID: Fixture.bundleID, appTransactionID: "download-1", appUserID: anonymous, environment: .sandbox,
                at: Fixture.at(1))
            #expect(try await alias(store, anonymous, to: "alice") == .aliased(CustomerAliasMove(created: true)))
            #expect(try await store.aliasedCustomer(bundleID: Fixture.bundleID, anonymousID: anonymous) == "alice")
            #expect(
                try await store.appTransactionCustomer(bundleID: Fixture.bundleID, appTransactionID: "download-1")
                    == "alice")
            #expect(try await events(store, "customer.aliased").count == 1)
        }
    }

    @Test("an anonymous ID becomes one customer only", arguments: StoreKind.backends)
    func oneTarget(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("c1", user: anonymous), grants: Fixture.coins)
            _ = try await alias(store, anonymous, to: "alice")
            #expect(try await alias(store, anonymous, to: "bob") == .aliasedToAnotherCustomer("alice"))
            #expect(try await customer(store, "bob").transactions.isEmpty)
            #expect(try await customer(store, "alice").balances == ["coins": 100])
        }
    }

    @Test("IDs that cannot alias are refused", arguments: StoreKind.backends)
    func refusals(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { (store: any LedgerStore) throws in
            for (from, to) in [("alice", "bob"), (anonymous, ""), (anonymous, AnonymousAppUserID.make())] {
                await #expect(throws: LedgerStoreError.self) { try await alias(store, from, to: to) }
            }
            #expect(try await store.aliasedCustomer(bundleID: Fixture.bundleID, anonymousID: anonymous) == nil)
        }
    }

    @Test("what reaches the anonymous ID after the alias moves with the next call", arguments: StoreKind.backends)
    func sweepsLateArrivals(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("c1", user: anonymous), grants: Fixture.coins)
            _ = try await alias(store, anonymous, to: "alice")
            _ = try await store.record(Fixture.transaction("c2", user: anonymous), grants: Fixture.coins)
            #expect(
                try await alias(store, anonymous, to: "alice")
                    == .aliased(CustomerAliasMove(created: false, transactionIDs: ["c2"], balances: ["coins": 100])))
            #expect(try await customer(store, "alice").balances == ["coins": 200])
            #expect(try await events(store, "customer.aliased").count == 2)
        }
    }

    @Test(
        "a purchase another identified customer holds part of follows the transfer policy",
        arguments: StoreKind.allCases)
    func transferPolicy(kind: StoreKind) async throws {
        for transfers in [false, true] {
            try await withLedgerStore(kind) { store in
                // Bob bought the subscription; its renewal was recorded for the anonymous customer.
                _ = try await store.record(
                    Fixture.transaction("s1", user: "bob", product: "pro", type: .autoRenewableSubscription),
                    grants: [])
                _ = try await store.record(
                    Fixture.transaction(
                        "s2", original: "s1", user: anonymous, product: "pro", type: .autoRenewableSubscription,
                        purchasedAt: 30 * 86_400),
                    grants: [])
                let outcome = try await alias(store, anonymous, to: "alice", transfers: transfers)
                let bob = try await customer(store, "bob").transactions.map(\.transactionID)
                let alice = try await customer(store, "alice").transactions.map(\.transactionID)
                if transfers {
                    #expect(
                        outcome
                            == .aliased(
                                CustomerAliasMove(created: true, transactionIDs: ["s2"], transferredPurchases: ["s1"])))
                    #expect(bob.isEmpty)
                    #expect(Set(alice) == ["s1", "s2"])
                    #expect(try await events(store, "transaction.transferred").count == 1)
                } else {
                    #expect(
                        outcome
                            == .aliased(CustomerAliasMove(created: true, transactionIDs: ["s2"], keptPurchases: ["s1"]))
                    )
                    #expect(bob == ["s1"])
                    #expect(alice == ["s2"])
                    #expect(try await events(store, "transaction.transferred").isEmpty)
                }
            }
        }
    }

    @Test(
        "concurrent aliases of one anonymous ID: one target wins, everything moves once", arguments: StoreKind.allCases)
    func concurrentAliases(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            for index in 0..<5 {
                _ = try await store.record(Fixture.transaction("c\(index)", user: anonymous), grants: Fixture.coins)
            }
            let outcomes = try await concurrently(8) { index in
                try await alias(store, anonymous, to: index % 2 == 0 ? "alice" : "bob")
            }
            let winner = try #require(
                try await store.aliasedCustomer(bundleID: Fixture.bundleID, anonymousID: anonymous))
            let loser = winner == "alice" ? "bob" : "alice"
            #expect(outcomes.filter { $0 == .aliasedToAnotherCustomer(winner) }.count == 4)
            var moved: [String] = []
            for case .aliased(let move) in outcomes { moved += move.transactionIDs }
            #expect(moved.sorted() == (0..<5).map { "c\($0)" })
            #expect(try await customer(store, winner).balances == ["coins": 500])
            #expect(try await customer(store, loser).transactions.isEmpty)
            try await expectLedgerMatchesBalances(store, user: winner)
        }
    }
}
