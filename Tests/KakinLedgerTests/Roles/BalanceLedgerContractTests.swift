import Foundation
import KakinLedger
import KakinTestSupport
import Testing

/// The contract of ``BalanceLedger``, run against every engine and the in-memory implementation.
@Suite("Ledger role: balances and spends")
struct BalanceLedgerContractTests {
    @Test("a spend lowers a balance once per key, never below zero, and a key names one spend", arguments: RoleImplementation.all)
    func spends(_ implementation: RoleImplementation) async throws {
        try await implementation.withBalances { balances, credit in
            func spend(_ amount: Int64, key: String, user: String = "alice", currency: String = "coins") async throws
                -> SpendOutcome
            {
                try await balances.spend(
                    bundleID: Fixture.bundleID, appUserID: user, currency: currency, amount: amount,
                    idempotencyKey: key, at: Fixture.at(100))
            }
            #expect(try await spend(10, key: "nothing yet") == .insufficientBalance(balance: 0))
            try await credit("alice", "coins", 100)
            #expect(try await spend(70, key: "s1") == .spent(balance: 30))
            #expect(try await spend(70, key: "s1") == .alreadySpent(balance: 30), "the same spend again")
            #expect(try await spend(40, key: "s2") == .insufficientBalance(balance: 30))
            #expect(try await spend(30, key: "s2") == .spent(balance: 0), "a key refused for want of currency stays free")
            #expect(try await spend(1, key: "s3", currency: "gems") == .insufficientBalance(balance: 0))
            #expect(try await spend(1, key: "s4", user: "bob") == .insufficientBalance(balance: 0), "balances are per customer")

            // A key names one spend of the app: another amount, customer or currency under it is refused.
            try await credit("alice", "coins", 100)
            for (amount, user, currency) in [(Int64(5), "alice", "coins"), (70, "bob", "coins"), (70, "alice", "gems")] {
                await #expect(throws: LedgerStoreError.self) {
                    try await spend(amount, key: "s1", user: user, currency: currency)
                }
            }
            #expect(try await spend(100, key: "s5") == .spent(balance: 0))
        }
    }

    @Test("a spend of nothing, or without a key, or with a key too long, is refused", arguments: RoleImplementation.all)
    func refused(_ implementation: RoleImplementation) async throws {
        try await implementation.withBalances { balances, credit in
            try await credit("alice", "coins", 100)
            for (amount, key) in [(Int64(0), "k"), (-5, "k"), (5, ""), (5, String(repeating: "k", count: 201))] {
                await #expect(throws: LedgerStoreError.self) {
                    try await balances.spend(
                        bundleID: Fixture.bundleID, appUserID: "alice", currency: "coins", amount: amount,
                        idempotencyKey: key, at: Fixture.at(100))
                }
            }
        }
    }
}
