import Foundation
import KakinLedger
import KakinTestSupport
import Testing

@Suite("Ledger: revocations and spends")
struct LedgerBalanceTests {
    private func customer(_ store: any LedgerStore, _ user: String = "alice") async throws -> CustomerState {
        try await store.customer(bundleID: Fixture.bundleID, appUserID: user)
    }

    private func spend(
        _ store: any LedgerStore, _ amount: Int64, key: String, user: String = "alice", currency: String = "coins"
    ) async throws -> SpendOutcome {
        try await store.spend(
            bundleID: Fixture.bundleID, appUserID: user, currency: currency, amount: amount, idempotencyKey: key,
            at: Fixture.at(100))
    }

    private func revoke(_ store: any LedgerStore, _ id: String, policy: ClawbackPolicy) async throws -> Bool {
        try await store.revoke(transactionID: id, at: Fixture.at(200), reason: 0, grants: Fixture.coins, policy: policy)
    }

    @Test("allowNegative takes everything back once, even below zero", arguments: StoreKind.allCases)
    func clawbackAllowNegative(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            #expect(try await spend(store, 70, key: "s1") == .spent(balance: 30))
            #expect(try await revoke(store, "t1", policy: .allowNegative))
            #expect(try await revoke(store, "t1", policy: .allowNegative) == false)
            let alice = try await customer(store)
            #expect(alice.balances == ["coins": -70])
            let clawback = try #require(alice.ledger.last)
            #expect(clawback.kind == .clawback)
            #expect(clawback.amount == -100)
            #expect(clawback.shortfall == 0)
            #expect(clawback.idempotencyKey == "clawback:t1:coins")
            #expect(clawback.transactionID == "t1")
            #expect(alice.transactions.first?.revocationDate == Fixture.at(200))
            #expect(alice.transactions.first?.revocationReason == .other)
            try await expectLedgerMatchesBalances(store, user: "alice")
            // A later purchase pays the debt off.
            _ = try await store.record(Fixture.transaction("t2", user: "alice"), grants: Fixture.coins)
            #expect(try await customer(store).balances == ["coins": 30])
        }
    }

    @Test("clampAtZero stops at zero and records the shortfall", arguments: StoreKind.allCases)
    func clawbackClampAtZero(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            _ = try await store.record(Fixture.transaction("t2", user: "alice"), grants: Fixture.coins)
            #expect(try await spend(store, 170, key: "s1") == .spent(balance: 30))
            #expect(try await revoke(store, "t1", policy: .clampAtZero))
            var alice = try await customer(store)
            #expect(alice.balances == ["coins": 0])
            #expect(alice.ledger.last?.amount == -30)
            #expect(alice.ledger.last?.shortfall == 70)
            // Nothing left: the whole credit is shortfall.
            #expect(try await revoke(store, "t2", policy: .clampAtZero))
            alice = try await customer(store)
            #expect(alice.balances == ["coins": 0])
            #expect(alice.ledger.last?.amount == 0)
            #expect(alice.ledger.last?.shortfall == 100)
            #expect(try await revoke(store, "t2", policy: .clampAtZero) == false)
            try await expectLedgerMatchesBalances(store, user: "alice")
        }
    }

    @Test("revoking an unknown or ownerless transaction claws nothing back", arguments: StoreKind.backends)
    func revokeWithoutCredits(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            #expect(try await revoke(store, "missing", policy: .allowNegative) == false)
            _ = try await store.record(Fixture.transaction("t1", source: .notification), grants: Fixture.coins)
            #expect(try await revoke(store, "t1", policy: .allowNegative))
            // The app names the owner after the refund: still nothing is granted.
            let upload = Fixture.transaction("t1", user: "alice")
            #expect(try await store.record(upload, grants: Fixture.coins) == .duplicate(ownerAssigned: true))
            let alice = try await customer(store)
            #expect(alice.ledger.isEmpty && alice.balances.isEmpty)
        }
    }

    @Test("concurrent revocations claw back once", arguments: StoreKind.allCases)
    func revokeOnceConcurrently(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice", quantity: 2), grants: Fixture.coins)
            let results = try await concurrently(20) { index in
                try await revoke(store, "t1", policy: index.isMultiple(of: 2) ? .allowNegative : .clampAtZero)
            }
            #expect(results.filter { $0 }.count == 1)
            let alice = try await customer(store)
            #expect(alice.balances == ["coins": 0])
            #expect(alice.ledger.map(\.kind) == [.credit, .clawback])
        }
    }

    @Test("a spend never goes below zero and happens once per key", arguments: StoreKind.backends)
    func spendRules(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            #expect(try await spend(store, 1, key: "s0") == .insufficientBalance(balance: 0))
            _ = try await store.record(
                Fixture.transaction("t1", user: "alice"), grants: [.currency("coins", amount: 20)])
            #expect(try await spend(store, 5, key: "s1") == .spent(balance: 15))
            #expect(try await spend(store, 5, key: "s1") == .alreadySpent(balance: 15))
            #expect(try await spend(store, 16, key: "s2") == .insufficientBalance(balance: 15))
            // A refused spend leaves its key free.
            #expect(try await spend(store, 15, key: "s2") == .spent(balance: 0))
            #expect(try await spend(store, 1, key: "s3", currency: "gems") == .insufficientBalance(balance: 0))

            await #expect(throws: LedgerStoreError(.idempotencyKeyReused)) { try await spend(store, 4, key: "s1") }
            await #expect(throws: LedgerStoreError(.idempotencyKeyReused)) {
                try await spend(store, 5, key: "s1", user: "bob")
            }
            await #expect(throws: LedgerStoreError(.invalidArgument)) { try await spend(store, 0, key: "s4") }
            await #expect(throws: LedgerStoreError(.invalidArgument)) { try await spend(store, -3, key: "s4") }
            await #expect(throws: LedgerStoreError(.invalidArgument)) { try await spend(store, 1, key: "") }

            let alice = try await customer(store)
            #expect(
                alice.ledger.map(\.idempotencyKey)
                    == ["grant:t1:coins", "spend:\(Fixture.bundleID):s1", "spend:\(Fixture.bundleID):s2"])
            #expect(alice.ledger.map(\.amount) == [20, -5, -15])
            #expect(alice.ledger.last?.transactionID == nil)
            #expect(alice.balances == ["coins": 0])
            try await expectLedgerMatchesBalances(store, user: "alice")
        }
    }

    @Test("50 concurrent spends of 1 on a balance of 20: exactly 20 succeed", arguments: StoreKind.allCases)
    func concurrentSpends(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(
                Fixture.transaction("t1", user: "alice"), grants: [.currency("coins", amount: 20)])
            let outcomes = try await concurrently(50) { index in try await spend(store, 1, key: "s\(index)") }
            let spent = outcomes.filter { if case .spent = $0 { true } else { false } }
            #expect(spent.count == 20)
            #expect(Set(spent) == Set((0..<20).map { SpendOutcome.spent(balance: Int64($0)) }))
            #expect(outcomes.filter { $0 == .insufficientBalance(balance: 0) }.count == 30)
            let alice = try await customer(store)
            #expect(alice.balances == ["coins": 0])
            #expect(alice.ledger.filter { $0.kind == .spend }.count == 20)
            try await expectLedgerMatchesBalances(store, user: "alice")
        }
    }

    @Test("the same spend retried concurrently is applied once", arguments: StoreKind.allCases)
    func concurrentRetries(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            _ = try await store.record(Fixture.transaction("t1", user: "alice"), grants: Fixture.coins)
            let outcomes = try await concurrently(30) { _ in try await spend(store, 10, key: "once") }
            #expect(outcomes.filter { $0 == .spent(balance: 90) }.count == 1)
            #expect(outcomes.filter { $0 == .alreadySpent(balance: 90) }.count == 29)
        }
    }

    @Test("ledger lines add up to the balances after a mix of everything", arguments: StoreKind.allCases)
    func ledgerSumsToBalances(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let grants: [Grant] = [.currency("coins", amount: 25), .currency("gems", amount: 3)]
            _ = try await concurrently(12) { index in
                try await store.record(
                    Fixture.transaction("t\(index)", user: index < 8 ? "alice" : "bob", quantity: index % 3 + 1),
                    grants: grants)
            }
            _ = try await concurrently(30) { index in
                try await spend(
                    store, Int64(index % 7 + 1), key: "s\(index)", user: index.isMultiple(of: 3) ? "bob" : "alice",
                    currency: index.isMultiple(of: 2) ? "coins" : "gems")
            }
            _ = try await concurrently(6) { index in
                try await revoke(
                    store, "t\(index * 2)", policy: index.isMultiple(of: 2) ? .allowNegative : .clampAtZero)
            }
            try await expectLedgerMatchesBalances(store, user: "alice")
            try await expectLedgerMatchesBalances(store, user: "bob")
        }
    }
}
