import Foundation
@testable import KakinLedger

/// Balances kept in memory: ``BalanceLedger`` for tests of what uses the role, run without a
/// database. Currency arrives through ``credit(bundleID:appUserID:currency:amount:)`` (on an
/// engine, the ingest of a purchase credits it). The argument checks and the spend key are the
/// ledger's own (``LedgerRules``).
public actor InMemoryBalanceLedger: BalanceLedger {
    private struct Customer: Hashable {
        var bundleID: String
        var appUserID: String
        var currency: String
    }

    private struct Spend: Equatable {
        var customer: Customer
        var amount: Int64
    }

    private var balances: [Customer: Int64] = [:]
    private var spends: [String: Spend] = [:]

    /// An empty ledger.
    public init() {}

    /// Adds `amount` of `currency` to a customer's balance.
    public func credit(bundleID: String, appUserID: String, currency: String, amount: Int64) {
        balances[Customer(bundleID: bundleID, appUserID: appUserID, currency: currency), default: 0] += amount
    }

    public func spend(
        bundleID: String, appUserID: String, currency: String, amount: Int64, idempotencyKey: String, at date: Date
    ) async throws -> SpendOutcome {
        try LedgerRules.validateSpend(amount: amount, idempotencyKey: idempotencyKey)
        let key = LedgerRules.spendKey(bundleID: bundleID, idempotencyKey: idempotencyKey)
        let customer = Customer(bundleID: bundleID, appUserID: appUserID, currency: currency)
        let spend = Spend(customer: customer, amount: amount)
        let balance = balances[customer] ?? 0
        if let earlier = spends[key] {
            guard earlier == spend else {
                throw LedgerStoreError(
                    .idempotencyKeyReused, "the key '\(idempotencyKey)' was used for another spend of this app")
            }
            return .alreadySpent(balance: balance)
        }
        guard balance >= amount else { return .insufficientBalance(balance: balance) }
        spends[key] = spend
        balances[customer] = balance - amount
        return .spent(balance: balance - amount)
    }
}
