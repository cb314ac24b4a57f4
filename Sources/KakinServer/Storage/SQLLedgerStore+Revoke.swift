public import Foundation
import SQLKit

extension SQLLedgerStore {
    /// Marks a transaction revoked and takes back its credits, once, in one database transaction.
    ///
    /// Once-ness comes from `UPDATE transactions … WHERE revocation_date IS NULL`: a second revoke
    /// (concurrent or later) updates nothing and returns false. What is taken back is each
    /// `credit` line of the transaction, under the unique key `clawback:<transactionId>:<currency>`.
    /// `grants` is not needed: the ledger knows what was credited.
    public func revoke(
        transactionID: String, at date: Date, reason: Int?, grants: [Grant], policy: ClawbackPolicy
    ) async throws -> Bool {
        try await writing { db in
            try await Self.revoke(transactionID: transactionID, at: date, reason: reason, policy: policy, on: db)
        }
    }

    private static func revoke(
        transactionID: String, at date: Date, reason: Int?, policy: ClawbackPolicy, on db: any SQLDatabase
    ) async throws -> Bool {
        let now = LedgerTime.milliseconds(date)
        guard
            let row = try await db.raw(
                """
                UPDATE transactions SET revocation_date = \(bind: now), revocation_reason = \(bind: reason)
                WHERE transaction_id = \(bind: transactionID) AND revocation_date IS NULL
                RETURNING bundle_id, app_user_id, original_transaction_id, product_id
                """
            ).first()
        else { return false }

        let bundleID = try row.decode(column: "bundle_id", as: String.self)
        let owner = try row.optional("app_user_id", as: String.self)
        try await appendEvent(
            LedgerEventType.transactionRevoked, bundleID: bundleID, appUserID: owner,
            payload: TransactionEventPayload(
                transactionId: transactionID,
                originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
                productId: try row.decode(column: "product_id", as: String.self), revocationDate: now,
                revocationReason: reason),
            at: now, on: db)

        let credits = try await db.raw(
            """
            SELECT \(unsafeRaw: LedgerRows.ledgerColumns) FROM ledger_entries
            WHERE transaction_id = \(bind: transactionID) AND kind = 'credit'
            ORDER BY id
            """
        ).all().map(LedgerRows.ledgerEntry)
        for credit in credits {
            try await clawBack(credit, policy: policy, at: now, on: db)
        }
        return true
    }

    /// Takes back one credit: all of it (`allowNegative`), or what the balance still holds
    /// (`clampAtZero`, the rest recorded as the line's shortfall).
    private static func clawBack(
        _ credit: LedgerEntry, policy: ClawbackPolicy, at now: Int64, on db: any SQLDatabase
    ) async throws {
        let owner = credit.appUserID
        let taken: Int64
        let balance: Int64
        switch policy {
        case .allowNegative:
            taken = credit.amount
            balance = try await addToBalance(
                -taken, bundleID: credit.bundleID, appUserID: owner, currency: credit.currency, on: db)
        case .clampAtZero:
            (taken, balance) = try await takeUpTo(
                credit.amount, bundleID: credit.bundleID, appUserID: owner, currency: credit.currency, on: db)
        }
        let key = "clawback:\(credit.transactionID ?? ""):\(credit.currency)"
        let shortfall = credit.amount - taken
        let entry = try await db.raw(
            """
            INSERT INTO ledger_entries (\(unsafeRaw: LedgerRows.ledgerColumns))
            VALUES ('clawback', \(bind: credit.bundleID), \(bind: owner), \(bind: credit.currency), \(bind: -taken), \
            \(bind: credit.transactionID), \(bind: key), \(bind: shortfall), \(bind: now))
            ON CONFLICT (idempotency_key) DO NOTHING
            RETURNING id
            """
        ).first()
        guard entry != nil else {
            // The revocation guard makes this unreachable; throwing rolls the balance change back.
            throw LedgerStoreError(.inconsistentState, "\(key) was already applied")
        }
        try await appendEvent(
            LedgerEventType.balanceClawedBack, bundleID: credit.bundleID, appUserID: owner,
            payload: BalanceEventPayload(
                currency: credit.currency, amount: -taken, balance: balance, idempotencyKey: key,
                transactionId: credit.transactionID, shortfall: shortfall),
            at: now, on: db)
    }

    /// Lowers a balance by at most `amount`, never below zero; what was taken and the balance after.
    ///
    /// The amount depends on the balance read, so the update only applies if the balance is still
    /// the one read (`WHERE amount = ?`); when another writer changed it in between, read again.
    /// SQLite's write lock makes the first try succeed; PostgreSQL may need a second.
    private static func takeUpTo(
        _ amount: Int64, bundleID: String, appUserID: String, currency: String, on db: any SQLDatabase
    ) async throws -> (taken: Int64, balance: Int64) {
        for _ in 0..<16 {
            let current = try await balance(bundleID: bundleID, appUserID: appUserID, currency: currency, on: db)
            let taken = min(amount, max(current, 0))
            guard taken > 0 else { return (0, current) }
            let updated = try await db.raw(
                """
                UPDATE balances SET amount = amount - \(bind: taken)
                WHERE bundle_id = \(bind: bundleID) AND app_user_id = \(bind: appUserID)
                  AND currency = \(bind: currency) AND amount = \(bind: current)
                RETURNING amount
                """
            ).first()
            if let updated {
                return (taken, try updated.decode(column: "amount", as: Int64.self))
            }
        }
        throw LedgerStoreError(.inconsistentState, "the \(currency) balance kept changing during a clawback")
    }
}
