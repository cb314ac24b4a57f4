import Foundation

/// An ingest, written once for both engines: the row recorded once, its owner found later, its
/// events and credits, a move to the customer who claims it, the Apple requests it owes, and its
/// revocation. SQLite runs one ingest per write; PostgreSQL writes the new rows of a group of
/// ingests together and runs these for the rest (a row held already, a move, a revocation).
enum IngestStatements {
    /// Records `change` (see ``LedgerStore/ingest(_:)``), its signed JWS stored with `digest`;
    /// its outcome without the summary, which the engine reads in the same write, and what it
    /// changed in the figures and metrics, for the engine to apply at the write's end.
    static func ingest(
        _ change: LedgerIngest, digest: Data?
    ) throws -> LedgerTransaction<(LedgerIngestOutcome, PurchaseChanges)> {
        let row = TransactionRow(change.transaction, owner: nil, signedDigest: digest)
        return owner(of: change.transaction).then { owner in
            var stored = row
            stored.appUserID = owner
            return try record(stored, of: change, owner: owner)
        }.then { recorded, changes in
            try afterRecord(change, outcome: LedgerIngestOutcome(recorded: recorded), changes: changes)
        }
    }

    /// Whether another customer keeps the purchase `change` recorded, the ingest not allowed to
    /// move it: nothing but the record happened, and no summary is read.
    static func keptByAnother(_ change: LedgerIngest, _ outcome: LedgerIngestOutcome) -> Bool {
        guard case .ownedByAnotherCustomer = outcome.recorded else { return false }
        return !change.transfersOwnership || change.transaction.appUserID == nil
    }

    /// What follows recording `change` (`outcome` so far): the move of a purchase another
    /// customer holds, when the ingest allows it; the Apple requests owed; the revocation.
    static func afterRecord(
        _ change: LedgerIngest, outcome: LedgerIngestOutcome, changes: PurchaseChanges
    ) throws -> LedgerTransaction<(LedgerIngestOutcome, PurchaseChanges)> {
        let transaction = change.transaction
        let moved: LedgerTransaction<(LedgerIngestOutcome, PurchaseChanges)>
        guard !keptByAnother(change, outcome) else { return .done((outcome, changes)) }
        if case .ownedByAnotherCustomer(let owner) = outcome.recorded, let newOwner = transaction.appUserID {
            moved = PurchaseChangeStatements.transfer(
                bundleID: transaction.bundleID, originalTransactionID: transaction.originalTransactionID, from: owner,
                to: newOwner, at: LedgerTime.milliseconds(transaction.recordedAt), changes: changes
            ).then { count, changes in
                var outcome = outcome
                if count > 0 { outcome.transferredFrom = owner }
                return .done((outcome, changes))
            }
        } else {
            moved = .done((outcome, changes))
        }
        return moved.then { outcome, changes in
            var requests: [LedgerSQL] = []
            if outcome.recorded == .recorded, let request = change.appleRequestOnRecord {
                requests.append(try AppleRequestRow.insert(request))
            }
            if outcome.transferredFrom != nil, let request = change.appleRequestOnTransfer {
                requests.append(try AppleRequestRow.insert(request))
            }
            let revoke: LedgerTransaction<(LedgerIngestOutcome, PurchaseChanges)> =
                transaction.revocationDate.map { revoked in
                    PurchaseChangeStatements.revoke(
                        transactionID: transaction.transactionID, at: LedgerTime.milliseconds(revoked),
                        reason: transaction.revocationReason?.rawValue, share: transaction.revokedShare,
                        policy: change.clawbackPolicy, changes: changes
                    ).then { revokedNow, changes in
                        var outcome = outcome
                        outcome.revoked = revokedNow
                        return .done((outcome, changes))
                    }
                } ?? .done((outcome, changes))
            return .run(requests) { _ in revoke }
        }
    }

    /// Records `row` once (`ON CONFLICT DO NOTHING`); a transaction held already is answered by
    /// ``held(_:owner:grants:changes:)``.
    private static func record(
        _ row: TransactionRow, of change: LedgerIngest, owner: String?
    ) throws -> LedgerTransaction<(RecordOutcome, PurchaseChanges)> {
        let transaction = change.transaction
        return .run([try "INSERT INTO \(insert: row) ON CONFLICT (transaction_id) DO NOTHING RETURNING transaction_id"]) {
            rows in
            guard !rows[0].isEmpty else { return held(transaction, owner: owner, grants: change.grants, changes: PurchaseChanges()) }
            var changes = PurchaseChanges()
            changes.figures.record(FigureSource(row))
            if PurchaseMetricChanges.keptInWrite(productType: row.productType) {
                changes.metrics.replace(nil, with: row, signed: SignedMetricFields(transaction))
            }
            let recorded = changes
            return try events(
                transaction, owner: owner, ownerAssigned: false, grants: change.grants, quantity: Int(row.quantity),
                credits: transaction.revocationDate == nil
            ).then { _ in .done((.recorded, recorded)) }
        }
    }

    /// What recording a transaction the ledger holds already comes to: a duplicate, another
    /// customer's purchase, or, for a row without an owner, the owner assigned now (`UPDATE …
    /// WHERE app_user_id IS NULL`), with its event and credits.
    static func held(
        _ transaction: RecordedTransaction, owner: String?, grants: [Grant], changes: PurchaseChanges
    ) -> LedgerTransaction<(RecordOutcome, PurchaseChanges)> {
        Self.owner(ofStored: transaction.transactionID).then { stored in
            switch stored {
            case .missing: throw LedgerStoreError(.inconsistentState, "transaction \(transaction.transactionID) vanished")
            case .known(let stored):
                return .done((LedgerRules.outcome(storedOwner: stored, claimedBy: transaction.appUserID), changes))
            case .unknown: break
            }
            guard let owner else { return .done((.duplicate(ownerAssigned: false), changes)) }
            return .run([
                """
                UPDATE transactions SET app_user_id = \(owner)
                WHERE transaction_id = \(transaction.transactionID) AND app_user_id IS NULL
                RETURNING \(unescaped: TransactionRow.selection())
                """,
                // Read after the update: the owner another writer assigned meanwhile, if the update found one.
                storedOwner(of: transaction.transactionID),
            ]) { rows in
                guard let assigned = try rows[0].first(TransactionRow.self) else {
                    guard case .known(let stored) = try StoredOwner.read(rows[1]) else {
                        throw LedgerStoreError(.inconsistentState, "transaction \(transaction.transactionID) lost its owner")
                    }
                    return .done((LedgerRules.outcome(storedOwner: stored, claimedBy: transaction.appUserID), changes))
                }
                var changed = changes
                if PurchaseMetricChanges.keptInWrite(productType: assigned.productType) {
                    var before = assigned
                    before.appUserID = nil
                    changed.metrics.replace(before, with: assigned, signed: SignedMetricFields(transaction))
                }
                let result = changed
                return try events(
                    transaction, owner: owner, ownerAssigned: true, grants: grants, quantity: Int(assigned.quantity),
                    credits: assigned.revocationDate == nil && transaction.revocationDate == nil
                ).then { _ in .done((.duplicate(ownerAssigned: true), result)) }
            }
        }
    }

    /// The `transaction.recorded` event of a row recorded, or given its owner, now; then, with
    /// `credits` and an owner, the credits of the currencies its grants name, each once.
    private static func events(
        _ transaction: RecordedTransaction, owner: String?, ownerAssigned: Bool, grants: [Grant], quantity: Int,
        credits: Bool
    ) throws -> LedgerTransaction<Void> {
        let now = LedgerTime.milliseconds(transaction.recordedAt)
        var steps: [LedgerTransaction<Void>] = [
            .run(
                EventStatements.append(
                    LedgerEventType.transactionRecorded, bundleID: transaction.bundleID, appUserID: owner,
                    payload: LedgerRules.recordedEvent(transaction, ownerAssigned: ownerAssigned), at: now)
            ) { _ in .done(()) }
        ]
        if let owner, credits {
            steps += try LedgerRules.credits(of: transaction, grants: grants, quantity: quantity).map {
                try PurchaseChangeStatements.credit(
                    $0, bundleID: transaction.bundleID, owner: owner, transactionID: transaction.transactionID, at: now)
            }
        }
        return .sequence(steps)
    }

    /// The owner a transaction is recorded for: the one it names, or for one that names none
    /// (renewals, restores), the owner of the earliest transaction of the same purchase.
    static func owner(of transaction: RecordedTransaction) -> LedgerTransaction<String?> {
        guard transaction.appUserID == nil else { return .done(transaction.appUserID) }
        return .run([earliestOwner(of: transaction)]) { rows in
            .done(try rows[0].first(LedgerColumn<String?>.self)?.value ?? nil)
        }
    }

    /// The owner of the earliest transaction of the same purchase, as `value`, for a transaction
    /// that names none. The index is named: ordered by purchase date, SQLite's planner could walk
    /// every transaction instead.
    static func earliestOwner(of transaction: RecordedTransaction) -> LedgerSQL {
        """
        SELECT app_user_id AS value FROM transactions \(.byOriginalTransaction)
        WHERE bundle_id = \(transaction.bundleID) AND original_transaction_id = \(transaction.originalTransactionID)
            AND app_user_id IS NOT NULL
        ORDER BY purchase_date, recorded_at, transaction_id LIMIT 1
        """
    }

    /// Who owns a transaction the ledger holds, if it holds it.
    static func owner(ofStored transactionID: String) -> LedgerTransaction<StoredOwner> {
        .run([storedOwner(of: transactionID)]) { rows in .done(try StoredOwner.read(rows[0])) }
    }

    /// A transaction's owner, as `value`; no row when the ledger does not hold it.
    static func storedOwner(of transactionID: String) -> LedgerSQL {
        "SELECT app_user_id AS value FROM transactions WHERE transaction_id = \(transactionID)"
    }
}

extension StoredOwner {
    /// The owner ``IngestStatements/storedOwner(of:)`` read.
    static func read(_ rows: any LedgerRowSet) throws -> StoredOwner {
        guard let row = try rows.first(LedgerColumn<String?>.self) else { return .missing }
        return StoredOwner(row.value)
    }
}
