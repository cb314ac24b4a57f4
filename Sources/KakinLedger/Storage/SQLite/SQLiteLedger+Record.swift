import AppStoreModels
import Foundation
import GRDB

/// Recording, moving and revoking purchases, and reading them back.
extension SQLiteLedger {
    /// Records, moves, revokes and summarizes in one write (see ``LedgerStore/ingest(_:)``).
    ///
    /// A transaction without a summary or a revocation, already held for the same customer (a
    /// notification or a reconciliation about a known purchase), is answered from a read without
    /// a write: owners never go back to unknown and rows are never deleted, so what the read saw
    /// is still true when the caller acts on it. The summary an ingest asks for is read in its
    /// write, so it holds what the write did.
    public func ingest(_ change: LedgerIngest) async throws -> LedgerIngestOutcome {
        try LedgerRules.validate(change)
        let transaction = change.transaction
        let share = transaction.revokedShare
        if change.summary == nil, transaction.revocationDate == nil, let owner = transaction.appUserID,
            case .known(let stored) = try await read({ db in try Self.storedOwner(of: transaction.transactionID, db) }),
            stored == owner
        {
            return LedgerIngestOutcome(recorded: .duplicate(ownerAssigned: false))
        }
        let digest: Data? =
            transaction.signedTransaction == nil
            ? nil : change.signedDigest?.bytes ?? transaction.signedTransaction.map { SignedDigest($0).bytes }
        return try await write { db in
            var changes = PurchaseChanges()
            var outcome = LedgerIngestOutcome(
                recorded: try Self.record(transaction, digest: digest, grants: change.grants, changes: &changes, db))
            if case .ownedByAnotherCustomer(let owner) = outcome.recorded {
                // Another customer keeps the purchase: nothing else changes.
                guard change.transfersOwnership, let newOwner = transaction.appUserID else {
                    try Self.apply(changes, db)
                    return outcome
                }
                let moved: Int
                (moved, changes) = try Self.perform(
                    PurchaseChangeStatements.transfer(
                        bundleID: transaction.bundleID, originalTransactionID: transaction.originalTransactionID,
                        from: owner, to: newOwner, at: LedgerTime.milliseconds(transaction.recordedAt),
                        changes: changes), db)
                if moved > 0 { outcome.transferredFrom = owner }
            }
            if case .recorded = outcome.recorded, let request = change.appleRequestOnRecord {
                _ = try db.rows(AppleRequestRow.insert(request))
            }
            if outcome.transferredFrom != nil, let request = change.appleRequestOnTransfer {
                _ = try db.rows(AppleRequestRow.insert(request))
            }
            if let revoked = transaction.revocationDate {
                (outcome.revoked, changes) = try Self.perform(
                    PurchaseChangeStatements.revoke(
                        transactionID: transaction.transactionID, at: LedgerTime.milliseconds(revoked),
                        reason: transaction.revocationReason?.rawValue, share: share, policy: change.clawbackPolicy,
                        changes: changes), db)
            }
            try Self.apply(changes, db)
            if let summary = change.summary, let owner = transaction.appUserID {
                outcome.summary = try Self.summary(
                    bundleID: transaction.bundleID, appUserID: owner, recent: summary.recent,
                    withJWS: summary.withJWS, db)
            }
            return outcome
        }
    }

    /// Records `transaction` once and credits its grants; a transaction held already only gets a
    /// missing owner filled in (and is credited then).
    private static func record(
        _ transaction: RecordedTransaction, digest: Data?, grants: [Grant], changes: inout PurchaseChanges,
        _ db: Database
    ) throws -> RecordOutcome {
        let now = LedgerTime.milliseconds(transaction.recordedAt)
        // Without an owner, the earliest known owner of the same purchase (renewals, restores). The
        // index is named: ordered by purchase date, the planner could walk every transaction instead.
        let owner =
            try transaction.appUserID
            ?? db.row(
                """
                SELECT app_user_id FROM transactions INDEXED BY transactions_by_original
                WHERE bundle_id = ? AND original_transaction_id = ? AND app_user_id IS NOT NULL
                ORDER BY purchase_date, recorded_at, transaction_id
                LIMIT 1
                """, [transaction.bundleID, transaction.originalTransactionID])?.value("app_user_id")
        // Every column is named by the row's coding keys; a row held already is left alone.
        let transactionRow = TransactionRow(transaction, owner: owner, signedDigest: digest)
        let row = try transactionRow.databaseDictionary
        if try db.run(TransactionRow.insertOrIgnore, StatementArguments(TransactionRow.columns.map { row[$0] })) > 0 {
            changes.figures.record(FigureSource(transactionRow))
            try recorded(
                transaction, row: transactionRow, before: nil, grants: grants,
                credits: transaction.revocationDate == nil, at: now, metrics: &changes.metrics, db)
            return .recorded
        }
        switch try storedOwner(of: transaction.transactionID, db) {
        case .missing: throw LedgerStoreError(.inconsistentState, "transaction \(transaction.transactionID) vanished")
        case .known(let stored): return LedgerRules.outcome(storedOwner: stored, claimedBy: transaction.appUserID)
        case .unknown: break
        }
        guard let owner else { return .duplicate(ownerAssigned: false) }
        guard
            let assigned = try TransactionRow.fetchOne(
                db.cachedStatement(
                    sql: """
                        UPDATE transactions SET app_user_id = ? WHERE transaction_id = ? AND app_user_id IS NULL
                        RETURNING \(TransactionRow.selection())
                        """), arguments: [owner, transaction.transactionID])
        else { throw LedgerStoreError(.inconsistentState, "transaction \(transaction.transactionID) lost its owner") }
        var before = assigned
        before.appUserID = nil
        try recorded(
            transaction, row: assigned, before: before, grants: grants,
            credits: assigned.revocationDate == nil && transaction.revocationDate == nil, at: now,
            metrics: &changes.metrics, db)
        return .duplicate(ownerAssigned: true)
    }

    /// What recording a row writes besides it (a new row, or one whose owner is found now, from
    /// `before`): its `transaction.recorded` event and, with `credits` and an owner, its credits
    /// with their events, appended with the event in one statement; its metrics are added to
    /// `metrics`, applied at the end of the write.
    private static func recorded(
        _ transaction: RecordedTransaction, row: TransactionRow, before: TransactionRow?, grants: [Grant],
        credits: Bool, at now: Int64, metrics: inout PurchaseMetricChanges, _ db: Database
    ) throws {
        if PurchaseMetricChanges.keptInWrite(productType: row.productType) {
            metrics.replace(before, with: row, signed: SignedMetricFields(transaction))
        }
        var events = [
            PendingEvent(
                LedgerEventType.transactionRecorded, bundleID: transaction.bundleID, appUserID: row.appUserID,
                payload: LedgerRules.recordedEvent(transaction, ownerAssigned: before != nil), at: now)
        ]
        if let owner = row.appUserID, credits {
            events += try credit(
                LedgerRules.credits(of: transaction, grants: grants, quantity: Int(row.quantity)), of: transaction,
                owner: owner, at: now, db)
        }
        try append(events, db)
    }

    static func storedOwner(of transactionID: String, _ db: Database) throws -> StoredOwner {
        guard let row = try db.row("SELECT app_user_id FROM transactions WHERE transaction_id = ?", [transactionID])
        else { return .missing }
        return StoredOwner(try row.value("app_user_id", String?.self))
    }

    /// Credits each currency once (under its idempotency key), raising the balance; the
    /// `balance.credited` event of each, for the caller to append.
    private static func credit(
        _ credits: [CurrencyCredit], of transaction: RecordedTransaction, owner: String, at now: Int64, _ db: Database
    ) throws -> [PendingEvent] {
        var events: [PendingEvent] = []
        for credit in credits {
            let inserted = try db.run(
                """
                INSERT INTO ledger_entries
                    (kind, bundle_id, app_user_id, currency, amount, transaction_id, idempotency_key, shortfall, created_at)
                VALUES ('credit', ?, ?, ?, ?, ?, ?, 0, ?)
                ON CONFLICT (idempotency_key) DO NOTHING
                """,
                [
                    transaction.bundleID, owner, credit.currency, credit.amount, transaction.transactionID,
                    credit.idempotencyKey, now,
                ])
            guard inserted > 0 else { continue }
            let balance = try addToBalance(
                credit.amount, bundleID: transaction.bundleID, appUserID: owner, currency: credit.currency, db)
            events.append(
                PendingEvent(
                    LedgerEventType.balanceCredited, bundleID: transaction.bundleID, appUserID: owner,
                    payload: credit.event(transactionID: transaction.transactionID, balance: balance), at: now))
        }
        return events
    }

    /// Adds `delta` (positive or negative) to a balance, creating it if needed; the new balance.
    static func addToBalance(
        _ delta: Int64, bundleID: String, appUserID: String, currency: String, _ db: Database
    ) throws -> Int64 {
        guard
            let row = try db.row(
                """
                INSERT INTO balances (bundle_id, app_user_id, currency, amount) VALUES (?, ?, ?, ?)
                ON CONFLICT (bundle_id, app_user_id, currency) DO UPDATE SET amount = balances.amount + excluded.amount
                RETURNING amount
                """, [bundleID, appUserID, currency, delta])
        else { throw LedgerStoreError(.inconsistentState, "the balance upsert returned nothing") }
        return try row.value("amount")
    }

    /// A customer's balances by currency.
    static func balances(bundleID: String, appUserID: String, _ db: Database) throws -> [String: Int64] {
        var balances: [String: Int64] = [:]
        for row in try db.rows(
            "SELECT currency, amount FROM balances WHERE bundle_id = ? AND app_user_id = ?", [bundleID, appUserID])
        {
            balances[try row.value("currency")] = try row.value("amount")
        }
        return balances
    }

    /// An outbox event to append: its row's values, and the purchase it marks for the metrics job.
    struct PendingEvent {
        var values: [any DatabaseValueConvertible & Sendable]
        var bundleID: String
        var purchase: String?

        init(_ type: String, bundleID: String, appUserID: String?, payload: some EventPayload, at now: Int64) {
            values = [type, bundleID, appUserID.map(CustomerIDRedaction.redacted), payload.json, now]
            self.bundleID = bundleID
            purchase = payload.changedPurchase
        }
    }

    /// Appends outbox events, in order, with one statement; marks the purchases they change.
    static func append(_ events: [PendingEvent], _ db: Database) throws {
        guard !events.isEmpty else { return }
        try db.run(
            "INSERT INTO events (type, bundle_id, app_user_id, payload, created_at) VALUES "
                + Array(repeating: "(?, ?, ?, ?, ?)", count: events.count).joined(separator: ", "),
            StatementArguments(events.flatMap(\.values)))
        let marked = events.compactMap { event in
            event.purchase.map { MetricsUpdate.UnitKey(bundleID: event.bundleID, originalTransactionID: $0) }
        }
        for statement in MetricStatements.mark(marked) { _ = try db.rows(statement) }
    }

    // MARK: Reading transactions

    public func customerSummary(
        bundleID: String, appUserID: String, recent: Int, withJWS: Bool
    ) async throws -> CustomerSummary {
        guard recent >= 0 else { throw LedgerStoreError(.invalidArgument, "recent must not be negative") }
        return try readNow { db in
            try Self.summary(bundleID: bundleID, appUserID: appUserID, recent: recent, withJWS: withJWS, db)
        }
    }

    /// The transactions of a customer (app, app user ID) that can grant access, oldest first, with
    /// and without their JWS: read through the index that holds only those.
    static let accessQuery = (withJWS: accessSelect(withJWS: true), withoutJWS: accessSelect(withJWS: false))

    private static func accessSelect(withJWS: Bool) -> String {
        """
        SELECT \(TransactionRow.selection(withJWS: withJWS)) FROM transactions
        WHERE bundle_id = ? AND app_user_id = ? AND product_type <> 'Consumable'
        ORDER BY purchase_date, transaction_id
        """
    }

    /// The transaction stored with a JWS of this digest, and its owner: read from the index by
    /// digest alone.
    static let knownDigestQuery =
        "SELECT transaction_id, bundle_id, environment, app_user_id FROM transactions WHERE signed_digest = ?"

    /// The summary as `db` sees it.
    static func summary(
        bundleID: String, appUserID: String, recent: Int, withJWS: Bool, _ db: Database
    ) throws -> CustomerSummary {
        let customer: StatementArguments = [bundleID, appUserID]
        let access = try db.transactions(withJWS ? accessQuery.withJWS : accessQuery.withoutJWS, customer)
        let count: Int =
            try db.row("SELECT COUNT(*) AS n FROM transactions WHERE bundle_id = ? AND app_user_id = ?", customer)?
            .value("n") ?? 0
        return CustomerSummary(
            bundleID: bundleID, appUserID: appUserID,
            balances: try balances(bundleID: bundleID, appUserID: appUserID, db),
            accessTransactions: access,
            recentTransactions: try page(
                bundleID: bundleID, appUserID: appUserID, limit: recent, before: nil, withJWS: withJWS, db),
            transactionCount: count)
    }

    private static func page(
        bundleID: String, appUserID: String, limit: Int, before cursor: TransactionCursor?, withJWS: Bool,
        _ db: Database
    ) throws -> [RecordedTransaction] {
        guard limit > 0 else { return [] }
        let columns = TransactionRow.selection(withJWS: withJWS)
        guard let cursor else {
            return try db.transactions(
                """
                SELECT \(columns) FROM transactions WHERE bundle_id = ? AND app_user_id = ?
                ORDER BY purchase_date DESC, transaction_id DESC LIMIT ?
                """, [bundleID, appUserID, limit])
        }
        let date = LedgerTime.milliseconds(cursor.purchaseDate)
        return try db.transactions(
            """
            SELECT \(columns) FROM transactions
            WHERE bundle_id = ? AND app_user_id = ?
              AND (purchase_date < ? OR (purchase_date = ? AND transaction_id < ?))
            ORDER BY purchase_date DESC, transaction_id DESC LIMIT ?
            """, [bundleID, appUserID, date, date, cursor.transactionID, limit])
    }

    public func signedTransactionAndSummary(
        digest: SignedDigest
    ) async throws -> (known: KnownSignedTransaction, summary: CustomerSummary?)? {
        try readNow { db in
            guard
                let row = try db.row(Self.knownDigestQuery, [digest.bytes])
            else { return nil }
            let known = KnownSignedTransaction(
                transactionID: try row.value("transaction_id"), bundleID: try row.value("bundle_id"),
                environment: AppStoreEnvironment(rawValue: try row.value("environment")),
                appUserID: try row.value("app_user_id"))
            let summary = try known.appUserID.map { owner in
                try Self.summary(bundleID: known.bundleID, appUserID: owner, recent: 0, withJWS: false, db)
            }
            return (known, summary)
        }
    }
}
