public import Foundation
import SQLKit

extension SQLLedgerStore {
    /// Spends currency in one database transaction: never below zero, once per idempotency key.
    ///
    /// First the ledger line is inserted under the unique key `spend:<idempotencyKey>` with
    /// `ON CONFLICT DO NOTHING`: if it was there already, this is a retry. Then
    /// `UPDATE balances SET amount = amount - ? WHERE … AND amount >= ?` lowers the balance only if
    /// it covers the amount; when it updates nothing, the transaction is rolled back, ledger line
    /// included, and the key stays free for a later attempt.
    public func spend(
        bundleID: String, appUserID: String, currency: String, amount: Int64, idempotencyKey: String, at date: Date
    ) async throws -> SpendOutcome {
        guard amount > 0 else { throw LedgerStoreError(.invalidArgument, "a spend amount must be positive") }
        guard !idempotencyKey.isEmpty else {
            throw LedgerStoreError(.invalidArgument, "a spend needs an idempotency key")
        }
        let key = "spend:\(idempotencyKey)"
        do {
            return try await writing { db in
                try await Self.spend(
                    bundleID: bundleID, appUserID: appUserID, currency: currency, amount: amount, key: key,
                    at: LedgerTime.milliseconds(date), on: db)
            }
        } catch let refused as InsufficientBalance {
            return .insufficientBalance(balance: refused.balance)
        }
    }

    /// Thrown inside the transaction to roll it back when the balance does not cover a spend.
    private struct InsufficientBalance: Error {
        let balance: Int64
    }

    private static func spend(
        bundleID: String, appUserID: String, currency: String, amount: Int64, key: String, at now: Int64,
        on db: any SQLDatabase
    ) async throws -> SpendOutcome {
        let entry = try await db.raw(
            """
            INSERT INTO ledger_entries (\(unsafeRaw: LedgerRows.ledgerColumns))
            VALUES ('spend', \(bind: bundleID), \(bind: appUserID), \(bind: currency), \(bind: -amount), NULL, \
            \(bind: key), 0, \(bind: now))
            ON CONFLICT (idempotency_key) DO NOTHING
            RETURNING id
            """
        ).first()
        guard entry != nil else {
            let earlier = try await db.raw(
                "SELECT \(unsafeRaw: LedgerRows.ledgerColumns) FROM ledger_entries WHERE idempotency_key = \(bind: key)"
            ).first().map(LedgerRows.ledgerEntry)
            guard let earlier, earlier.kind == .spend, earlier.bundleID == bundleID, earlier.appUserID == appUserID,
                earlier.currency == currency, earlier.amount == -amount
            else {
                throw LedgerStoreError(
                    .idempotencyKeyReused, "the key '\(key)' was used for another spend")
            }
            let current = try await balance(bundleID: bundleID, appUserID: appUserID, currency: currency, on: db)
            return .alreadySpent(balance: current)
        }

        let updated = try await db.raw(
            """
            UPDATE balances SET amount = amount - \(bind: amount)
            WHERE bundle_id = \(bind: bundleID) AND app_user_id = \(bind: appUserID) AND currency = \(bind: currency)
              AND amount >= \(bind: amount)
            RETURNING amount
            """
        ).first()
        guard let updated else {
            let current = try await balance(bundleID: bundleID, appUserID: appUserID, currency: currency, on: db)
            throw InsufficientBalance(balance: current)
        }
        let balance = try updated.decode(column: "amount", as: Int64.self)
        try await appendEvent(
            LedgerEventType.balanceSpent, bundleID: bundleID, appUserID: appUserID,
            payload: BalanceEventPayload(currency: currency, amount: -amount, balance: balance, idempotencyKey: key),
            at: now, on: db)
        return .spent(balance: balance)
    }
}
