import Foundation
import KakinCore
import KakinLedger
import KakinTestSupport
import Testing

/// The outbox events an alias writes; what an alias moves is the contract of ``CustomerLedger``
/// (``CustomerLedgerContractTests``).
@Suite("Ledger: the events of anonymous customers becoming identified ones")
struct LedgerAliasTests {
    private let anonymous = AnonymousAppUserID.prefix + "0123456789abcdef0123456789abcdef"
    private let hook = "https://hooks.example/aliases"

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
        "an alias that moves something writes one customer.aliased event with what it moved; the same call again none",
        arguments: StoreKind.allCases)
    func aliasedEvent(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("c1", user: anonymous), grants: Fixture.coins)
            _ = try await store.record(
                Fixture.transaction("n1", user: anonymous, product: "removeAds", type: .nonConsumable), grants: [])
            _ = try await store.spend(
                bundleID: Fixture.bundleID, appUserID: anonymous, currency: "coins", amount: 30, idempotencyKey: "s1",
                at: Fixture.at(20))
            _ = try await alias(store, anonymous, to: "alice")
            _ = try await alias(store, anonymous, to: "alice")
            let aliased = try await events(store, "customer.aliased")
            #expect(aliased.count == 1)
            #expect(aliased.first?["alias"] as? String == CustomerIDRedaction.redacted(anonymous))
            #expect(aliased.first?["appUserId"] as? String == "alice")
            #expect(aliased.first?["transactionIds"] as? [String] == ["c1", "n1"])
            #expect(aliased.first?["balances"] as? [String: Int] == ["coins": 70])
            #expect(aliased.first?["created"] as? Bool == true)

            // What reaches the anonymous ID later moves with the next call, and writes its own event.
            _ = try await store.record(Fixture.transaction("c2", user: anonymous), grants: Fixture.coins)
            _ = try await alias(store, anonymous, to: "alice")
            let later = try await events(store, "customer.aliased", now: 2000)
            #expect(later.count == 2)
            #expect(later.last?["transactionIds"] as? [String] == ["c2"])
            #expect(later.last?["created"] as? Bool == false)
        }
    }

    @Test(
        "an anonymous ID never seen writes no customer.aliased event; one seen through its app download does",
        arguments: StoreKind.backends)
    func unseenWritesNoEvent(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("c1", user: "alice"), grants: Fixture.coins)
            _ = try await alias(store, anonymous, to: "alice")
            let written = try await store.dueEvents(endpoint: hook, now: Fixture.at(1000), limit: 1000)
            #expect(
                written.map(\.type) == ["transaction.recorded", "balance.credited"],
                "the purchase's events, and no customer.aliased")

            try await store.linkAppTransaction(
                bundleID: Fixture.bundleID, appTransactionID: "download-1", appUserID: anonymous, environment: .sandbox,
                at: Fixture.at(1))
            _ = try await alias(store, anonymous, to: "alice")
            #expect(try await events(store, "customer.aliased", now: 2000).count == 1)
        }
    }

    @Test(
        "a purchase moved from another identified customer by an alias writes a transaction.transferred event",
        arguments: StoreKind.backends)
    func transferredEvent(kind: StoreKind) async throws {
        for transfers in [false, true] {
            try await withLedgerStore(kind) { store in
                try await CustomerLedgerContractTests.shareSubscription(store, with: anonymous)
                _ = try await alias(store, anonymous, to: "alice", transfers: transfers)
                let transferred = try await events(store, "transaction.transferred")
                #expect(transferred.count == (transfers ? 1 : 0))
                if transfers {
                    #expect(transferred.first?["from"] as? String == "bob")
                    #expect(transferred.first?["to"] as? String == "alice")
                }
            }
        }
    }
}
