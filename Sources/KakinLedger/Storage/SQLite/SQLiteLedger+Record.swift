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
            var figures = FigureChanges()
            var outcome = LedgerIngestOutcome(
                recorded: try Self.record(transaction, digest: digest, grants: change.grants, figures: &figures, db))
            if case .ownedByAnotherCustomer(let owner) = outcome.recorded {
                // Another customer keeps the purchase: nothing else changes.
                guard change.transfersOwnership, let newOwner = transaction.appUserID else {
                    try Self.add(figures, db)
                    return outcome
                }
                let moved = try Self.transfer(
                    bundleID: transaction.bundleID, originalTransactionID: transaction.originalTransactionID,
                    from: owner, to: newOwner, at: LedgerTime.milliseconds(transaction.recordedAt), db)
                if moved > 0 { outcome.transferredFrom = owner }
            }
            if case .recorded = outcome.recorded, let request = change.appleRequestOnRecord {
                _ = try db.rows(AppleRequestRow.insert(request))
            }
            if outcome.transferredFrom != nil, let request = change.appleRequestOnTransfer {
                _ = try db.rows(AppleRequestRow.insert(request))
            }
            if let revoked = transaction.revocationDate {
                outcome.revoked = try Self.revoke(
                    transactionID: transaction.transactionID, at: revoked,
                    reason: transaction.revocationReason?.rawValue, share: share, policy: change.clawbackPolicy,
                    figures: &figures, db)
            }
            try Self.add(figures, db)
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
        _ transaction: RecordedTransaction, digest: Data?, grants: [Grant], figures: inout FigureChanges,
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
            figures.record(FigureSource(transactionRow))
            try recorded(
                transaction, row: transactionRow, before: nil, grants: grants,
                credits: transaction.revocationDate == nil, at: now, db)
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
            credits: assigned.revocationDate == nil && transaction.revocationDate == nil, at: now, db)
        return .duplicate(ownerAssigned: true)
    }

    /// What recording a row writes besides it (a new row, or one whose owner is found now, from
    /// `before`): its metrics, its `transaction.recorded` event and, with `credits` and an owner,
    /// its credits with their events, appended with the event in one statement.
    private static func recorded(
        _ transaction: RecordedTransaction, row: TransactionRow, before: TransactionRow?, grants: [Grant],
        credits: Bool, at now: Int64, _ db: Database
    ) throws {
        if PurchaseMetricChanges.keptInWrite(productType: row.productType) {
            var metrics = PurchaseMetricChanges()
            metrics.replace(before, with: row, signed: SignedMetricFields(transaction))
            try apply(metrics, db)
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

    /// The current balance, zero when the customer never had that currency.
    static func balance(bundleID: String, appUserID: String, currency: String, _ db: Database) throws -> Int64 {
        try db.row(
            "SELECT amount FROM balances WHERE bundle_id = ? AND app_user_id = ? AND currency = ?",
            [bundleID, appUserID, currency])?.value("amount") ?? 0
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

    /// Appends an outbox event inside the write's transaction.
    static func appendEvent(
        _ type: String, bundleID: String, appUserID: String?, payload: some EventPayload, at now: Int64, _ db: Database
    ) throws {
        try append([PendingEvent(type, bundleID: bundleID, appUserID: appUserID, payload: payload, at: now)], db)
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
        for event in events {
            if let purchase = event.purchase { try markForMetrics(bundleID: event.bundleID, purchase, db) }
        }
    }

    /// Moves one purchase (every transaction of the app with `originalTransactionID` still owned by
    /// `from`) to `to`, with a `transaction.transferred` event; how many transactions moved.
    /// Currency already credited stays where it was: a move carries access, not balances.
    static func transfer(
        bundleID: String, originalTransactionID: String, from: String, to: String, at now: Int64, _ db: Database
    ) throws -> Int {
        guard from != to else { return 0 }
        let rows = try TransactionRow.fetchAll(
            db.cachedStatement(
                sql: """
                    UPDATE transactions SET app_user_id = ?
                    WHERE bundle_id = ? AND original_transaction_id = ? AND app_user_id = ?
                    RETURNING \(TransactionRow.selection())
                    """), arguments: [to, bundleID, originalTransactionID, from])
        guard !rows.isEmpty else { return 0 }
        let moved = rows.map(\.transactionID)
        var metrics = PurchaseMetricChanges()
        metrics.move(rows, from: from)
        try apply(metrics, db)
        try appendEvent(
            LedgerEventType.transactionTransferred, bundleID: bundleID, appUserID: to,
            payload: TransferEventPayload(
                originalTransactionId: originalTransactionID, from: from, to: to, transactionIds: moved.sorted(),
                metricsKeptInWrite: rows.allSatisfy { PurchaseMetricChanges.keptInWrite(productType: $0.productType) }),
            at: now, db)
        return moved.count
    }

    // MARK: Revocations

    /// Marks a transaction revoked and takes back `share` of its credits, once per share: the
    /// update applies only when the share revoked so far (0 when not revoked, the whole when
    /// revoked with no percentage) is smaller, and the revocation is dated after the latest refund
    /// reversal (`revocation_reversed_at`; one dated no later is a revocation it reversed). For
    /// each `credit` line other than a reinstatement's, `share` of it less what earlier revocations
    /// since that reversal asked for is taken back under
    /// ``LedgerRules/clawbackKey(transactionID:currency:share:reversedAt:)``.
    static func revoke(
        transactionID: String, at date: Date, reason: Int?, share: Int, policy: ClawbackPolicy,
        figures: inout FigureChanges, _ db: Database
    ) throws -> Bool {
        let now = LedgerTime.milliseconds(date)
        // One writer at a time: the row read is the one the update changes.
        let before = try TransactionRow.fetchOne(
            db.cachedStatement(sql: "SELECT \(TransactionRow.selection()) FROM transactions WHERE transaction_id = ?"),
            arguments: [transactionID])
        let storedShare: Int? = share == RecordedTransaction.wholeShare ? nil : share
        guard
            let row = try TransactionRow.fetchOne(
                db.cachedStatement(
                    sql: """
                        UPDATE transactions SET revocation_date = ?, revocation_reason = ?, revocation_percentage = ?
                        WHERE transaction_id = ?
                          AND COALESCE(revocation_percentage, CASE WHEN revocation_date IS NULL THEN 0 ELSE \
                        \(RecordedTransaction.wholeShare) END) < ?
                          AND (revocation_reversed_at IS NULL OR revocation_reversed_at < ?)
                        RETURNING \(TransactionRow.selection())
                        """), arguments: [now, reason, storedShare, transactionID, share, now])
        else { return false }
        let reversedAt = row.revocationReversedAt
        if let before { figures.replace(FigureSource(before), with: FigureSource(row)) }
        let keptInWrite = PurchaseMetricChanges.keptInWrite(productType: row.productType)
        if keptInWrite {
            var metrics = PurchaseMetricChanges()
            metrics.replace(before, with: row)
            try apply(metrics, db)
        }
        try appendEvent(
            LedgerEventType.transactionRevoked, bundleID: row.bundleID, appUserID: row.appUserID,
            payload: TransactionEventPayload(
                transactionId: transactionID, originalTransactionId: row.originalTransactionID,
                metricsKeptInWrite: keptInWrite, productId: row.productID, revocationDate: now,
                revocationReason: reason, revocationPercentage: share),
            at: now, db)
        let credits = try db.rows(
            """
            SELECT \(ledgerColumns) FROM ledger_entries
            WHERE transaction_id = ? AND kind = 'credit' AND idempotency_key NOT LIKE ?
            ORDER BY id
            """, [transactionID, LedgerRules.reinstatementKeyPrefix + "%"]
        ).map(ledgerEntry)
        for credit in credits {
            try clawBack(credit, share: share, reversedAt: reversedAt, policy: policy, at: now, db)
        }
        return true
    }

    /// Takes back `share` of one credit, less what earlier revocations of it since the latest
    /// refund reversal (`reversedAt`) asked for (their amounts taken plus their shortfalls; a
    /// clawback line is dated with its revocation, and a reversal reinstates only revocations
    /// dated before it): all of it (`allowNegative`), or what the balance still holds
    /// (`clampAtZero`, the rest recorded as the line's shortfall).
    private static func clawBack(
        _ credit: LedgerEntry, share: Int, reversedAt: Int64?, policy: ClawbackPolicy, at now: Int64, _ db: Database
    ) throws {
        let transactionID = credit.transactionID ?? ""
        let asked: Int64 =
            try db.row(
                """
                SELECT COALESCE(SUM(shortfall - amount), 0) AS asked FROM ledger_entries
                WHERE transaction_id = ? AND kind = 'clawback' AND currency = ? AND created_at > ?
                """, [transactionID, credit.currency, reversedAt ?? Int64.min])?.value("asked") ?? 0
        let amount = LedgerRules.creditShare(credit.amount, share: share) - asked
        guard amount > 0 else { return }
        let (bundleID, owner, currency) = (credit.bundleID, credit.appUserID, credit.currency)
        var taken = amount
        var balance: Int64
        switch policy {
        case .allowNegative:
            balance = try addToBalance(-amount, bundleID: bundleID, appUserID: owner, currency: currency, db)
        case .clampAtZero:
            // One writer at a time: the balance read is the one the update changes.
            balance = try self.balance(bundleID: bundleID, appUserID: owner, currency: currency, db)
            taken = min(amount, max(balance, 0))
            if taken > 0 {
                balance = try addToBalance(-taken, bundleID: bundleID, appUserID: owner, currency: currency, db)
            }
        }
        let key = LedgerRules.clawbackKey(
            transactionID: transactionID, currency: currency, share: share, reversedAt: reversedAt)
        let inserted = try db.run(
            """
            INSERT INTO ledger_entries
                (kind, bundle_id, app_user_id, currency, amount, transaction_id, idempotency_key, shortfall, created_at)
            VALUES ('clawback', ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (idempotency_key) DO NOTHING
            """, [bundleID, owner, currency, -taken, credit.transactionID, key, amount - taken, now])
        // The revocation's guard makes this unreachable; throwing rolls the balance change back.
        guard inserted > 0 else { throw LedgerStoreError(.inconsistentState, "\(key) was already applied") }
        try appendEvent(
            LedgerEventType.balanceClawedBack, bundleID: bundleID, appUserID: owner,
            payload: BalanceEventPayload(
                currency: currency, amount: -taken, balance: balance, idempotencyKey: key,
                transactionId: credit.transactionID, shortfall: amount - taken),
            at: now, db)
    }

    // MARK: Refund reversals

    /// Reinstates a transaction whose refund Apple reversed, in one write (see
    /// ``LedgerStore/reinstate(transactionID:reversedAt:grants:)``).
    public func reinstate(transactionID: String, reversedAt date: Date, grants: [Grant]) async throws -> Bool {
        let reversedAt = LedgerTime.milliseconds(date)
        return try await write { db in
            // One writer at a time: the row read is the one the updates change.
            guard
                let stored = try TransactionRow.fetchOne(
                    db.cachedStatement(
                        sql: "SELECT \(TransactionRow.selection()) FROM transactions WHERE transaction_id = ?"),
                    arguments: [transactionID])
            else { return false }
            let previous = stored.revocationReversedAt
            if let previous, previous >= reversedAt { return false }
            try db.run(
                "UPDATE transactions SET revocation_reversed_at = ? WHERE transaction_id = ?",
                [reversedAt, transactionID])
            guard let revoked = stored.revocationDate, revoked < reversedAt else { return false }
            let before = FigureSource(stored)
            try db.run(
                """
                UPDATE transactions SET revocation_date = NULL, revocation_reason = NULL, revocation_percentage = NULL
                WHERE transaction_id = ?
                """, [transactionID])
            var figures = FigureChanges()
            var after = before
            after.revocationDate = nil
            figures.replace(before, with: after)
            if PurchaseMetricChanges.keptInWrite(productType: stored.productType) {
                var reinstated = stored
                (reinstated.revocationDate, reinstated.revocationReason, reinstated.revocationPercentage) = (nil, nil, nil)
                var metrics = PurchaseMetricChanges()
                metrics.replace(stored, with: reinstated)
                try Self.apply(metrics, db)
            }
            try Self.appendEvent(
                LedgerEventType.transactionReinstated, bundleID: stored.bundleID, appUserID: stored.appUserID,
                payload: LedgerRules.reinstatedEvent(stored, reversedAt: reversedAt), at: reversedAt, db)
            // What the revocations since the previous reversal took, to whom they took it from.
            let taken = try db.rows(
                """
                SELECT bundle_id, app_user_id, currency, SUM(-amount) AS taken FROM ledger_entries
                WHERE transaction_id = ? AND kind = 'clawback' AND created_at > ?
                GROUP BY bundle_id, app_user_id, currency
                ORDER BY bundle_id, app_user_id, currency
                """, [transactionID, previous ?? Int64.min])
            for line in taken {
                let amount: Int64 = try line.value("taken")
                guard amount > 0 else { continue }
                let (bundleID, owner, currency): (String, String, String) = (
                    try line.value("bundle_id"), try line.value("app_user_id"), try line.value("currency")
                )
                let key = LedgerRules.reinstatementKey(
                    transactionID: transactionID, currency: currency, reversedAt: reversedAt)
                let inserted = try db.run(
                    """
                    INSERT INTO ledger_entries
                        (kind, bundle_id, app_user_id, currency, amount, transaction_id, idempotency_key, shortfall, \
                    created_at)
                    VALUES ('credit', ?, ?, ?, ?, ?, ?, 0, ?)
                    ON CONFLICT (idempotency_key) DO NOTHING
                    """, [bundleID, owner, currency, amount, transactionID, key, reversedAt])
                guard inserted > 0 else { continue }
                let balance = try Self.addToBalance(amount, bundleID: bundleID, appUserID: owner, currency: currency, db)
                try Self.appendEvent(
                    LedgerEventType.balanceCredited, bundleID: bundleID, appUserID: owner,
                    payload: BalanceEventPayload(
                        currency: currency, amount: amount, balance: balance, idempotencyKey: key,
                        transactionId: transactionID),
                    at: reversedAt, db)
            }
            // A transaction recorded revoked was never credited: its owner is, now.
            if let owner = stored.appUserID {
                let transaction = try stored.transaction()
                try Self.append(
                    Self.credit(
                        LedgerRules.credits(of: transaction, grants: grants, quantity: transaction.quantity),
                        of: transaction, owner: owner, at: reversedAt, db), db)
            }
            try Self.add(figures, db)
            return true
        }
    }

    // MARK: Daily figures

    /// Adds a write's changes to `daily_figures`, in key order.
    static func add(_ figures: FigureChanges, _ db: Database) throws {
        for (key, values) in figures.sorted {
            try db.run(
                """
                INSERT INTO daily_figures (\(FigureStatements.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                \(FigureStatements.addConflict)
                """,
                [
                    key.bundleID, key.day, key.productID, key.currency, key.environment, values.purchases,
                    values.refunds, values.revenue, values.subscriptionStarts, values.subscriptionEnds,
                ])
        }
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

    // MARK: Rows

    /// The columns of `ledger_entries` ``ledgerEntry(_:)`` reads.
    static let ledgerColumns =
        "kind, bundle_id, app_user_id, currency, amount, transaction_id, idempotency_key, shortfall, created_at"

    /// A row of ``ledgerColumns``.
    static func ledgerEntry(_ row: Row) throws -> LedgerEntry {
        let kindValue: String = try row.value("kind")
        guard let kind = LedgerEntry.Kind(rawValue: kindValue) else {
            throw LedgerStoreError(.inconsistentState, "unknown ledger entry kind '\(kindValue)'")
        }
        return LedgerEntry(
            kind: kind, bundleID: try row.value("bundle_id"),
            appUserID: try row.value("app_user_id"), currency: try row.value("currency"),
            amount: try row.value("amount"), transactionID: try row.value("transaction_id"),
            idempotencyKey: try row.value("idempotency_key"),
            shortfall: try row.value("shortfall"), createdAt: try row.date("created_at"))
    }
}
