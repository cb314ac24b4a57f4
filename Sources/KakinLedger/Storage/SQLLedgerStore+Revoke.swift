public import Foundation
import SQLKit

extension SQLLedgerStore {
    /// Marks a transaction revoked and takes back `share` of its credits, once per share, in one
    /// database transaction.
    ///
    /// Once-ness comes from `UPDATE transactions … WHERE <share already revoked> < share`, the
    /// share already revoked being 0 for a transaction not revoked, its `revocation_percentage`
    /// after a prorated refund, and the whole (100000) after a whole revocation, which is stored
    /// with `revocation_percentage` NULL. A second revoke with the same share (Apple delivering the
    /// same refund again, concurrently or later) updates nothing and returns false, and so does a
    /// smaller one. What is taken back is, for each `credit` line of the transaction, `share` of the
    /// credit less what earlier revocations of it asked for (see `creditShare(_:share:)`), under
    /// the unique key `clawback:<transactionId>:<currency>` for the whole and
    /// `clawback:<transactionId>:<currency>:<share>` for a part. `grants` is not needed: the ledger
    /// knows what was credited.
    ///
    /// - Throws: ``LedgerStoreError/Code/invalidArgument`` when `share` is outside 1…100000.
    public func revoke(
        transactionID: String, at date: Date, reason: Int?, share: Int, grants: [Grant], policy: ClawbackPolicy
    ) async throws -> Bool {
        guard (1...RecordedTransaction.wholeShare).contains(share) else {
            throw LedgerStoreError(
                .invalidArgument,
                "a revoked share is 1 to \(RecordedTransaction.wholeShare) milliunits of a percent, not \(share)")
        }
        return try await writing { db in
            try await Self.revoke(
                transactionID: transactionID, at: date, reason: reason, share: share, policy: policy, on: db)
        }
    }

    static func revoke(
        transactionID: String, at date: Date, reason: Int?, share: Int, policy: ClawbackPolicy, on db: any SQLDatabase
    ) async throws -> Bool {
        let now = LedgerTime.milliseconds(date)
        let storedShare: Int? = share == RecordedTransaction.wholeShare ? nil : share
        guard
            let row = try await db.raw(
                """
                UPDATE transactions SET revocation_date = \(bind: now), revocation_reason = \(bind: reason), \
                revocation_percentage = \(bind: storedShare)
                WHERE transaction_id = \(bind: transactionID)
                  AND COALESCE(revocation_percentage, CASE WHEN revocation_date IS NULL THEN 0 ELSE \
                \(unsafeRaw: String(RecordedTransaction.wholeShare)) END) < \(bind: share)
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
                revocationReason: reason, revocationPercentage: share),
            at: now, on: db)

        let credits = try await db.raw(
            """
            SELECT \(unsafeRaw: LedgerRows.ledgerColumns) FROM ledger_entries
            WHERE transaction_id = \(bind: transactionID) AND kind = 'credit'
            ORDER BY id
            """
        ).all().map(LedgerRows.ledgerEntry)
        for credit in credits {
            try await clawBack(credit, share: share, policy: policy, at: now, on: db)
        }
        return true
    }

    /// The part of a credit of `amount` units that a refund of `share` milliunits of a percent
    /// takes back, rounded down to whole units.
    ///
    /// Rounding down keeps a fraction of a unit with the customer rather than taking back one that
    /// was not refunded (a 33.333 % refund of 100 points takes back 33). Nothing is lost overall:
    /// each later, larger refund of the same transaction takes back its own share less what was
    /// already taken, so a full refund after any number of partial ones takes back exactly the rest.
    /// Computed without overflow for any non-negative `amount`.
    static func creditShare(_ amount: Int64, share: Int) -> Int64 {
        let whole = Int64(RecordedTransaction.wholeShare)
        let share = Int64(share)
        return amount / whole * share + amount % whole * share / whole
    }

    /// Takes back `share` of one credit, less what earlier revocations of it asked for: all of it
    /// (`allowNegative`), or what the balance still holds (`clampAtZero`, the rest recorded as the
    /// line's shortfall). What a revocation asked for is its line's amount taken plus its
    /// shortfall, so a shortfall is not asked for again by a later, larger refund.
    private static func clawBack(
        _ credit: LedgerEntry, share: Int, policy: ClawbackPolicy, at now: Int64, on db: any SQLDatabase
    ) async throws {
        let owner = credit.appUserID
        let asked =
            try await db.raw(
                """
                SELECT CAST(COALESCE(SUM(shortfall - amount), 0) AS BIGINT) AS asked FROM ledger_entries
                WHERE transaction_id = \(bind: credit.transactionID) AND kind = 'clawback'
                  AND currency = \(bind: credit.currency)
                """
            ).first()?.decode(column: "asked", as: Int64.self) ?? 0
        let amount = creditShare(credit.amount, share: share) - asked
        guard amount > 0 else { return }
        let taken: Int64
        let balance: Int64
        switch policy {
        case .allowNegative:
            taken = amount
            balance = try await addToBalance(
                -taken, bundleID: credit.bundleID, appUserID: owner, currency: credit.currency, on: db)
        case .clampAtZero:
            (taken, balance) = try await takeUpTo(
                amount, bundleID: credit.bundleID, appUserID: owner, currency: credit.currency, on: db)
        }
        var key = "clawback:\(credit.transactionID ?? ""):\(credit.currency)"
        if share != RecordedTransaction.wholeShare { key += ":\(share)" }
        let shortfall = amount - taken
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
