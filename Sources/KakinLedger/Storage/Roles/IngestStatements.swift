import Foundation

/// Ingests, written once for both engines: the rows recorded once, their owners found later,
/// their events and credits, a move to the customer who claims a purchase, the Apple requests
/// owed, revocations. A group of ingests is one write: its new rows are inserted by one statement,
/// and the events and credits of those rows are written together when something needs them, so
/// that a group of new purchases takes a few statements however many it holds.
enum IngestStatements {
    /// Records `changes` in order (each as ``LedgerStore/ingest(_:)`` says), in one write; their
    /// outcomes without the summaries (``summaries(_:_:)`` says which to read), and what they
    /// changed in the figures and metrics, for the engine to apply at the write's end.
    ///
    /// The group is taken in runs: an ingest whose transaction names no owner starts a new run
    /// when one before it in its run is of the same purchase, so that it finds the owner that one
    /// recorded, as it would one write later.
    static func ingest(_ changes: [LedgerIngest]) throws -> LedgerTransaction<([LedgerIngestOutcome], PurchaseChanges)> {
        var runs: [[LedgerIngest]] = [[]]
        var purchases = Set<MetricsUpdate.UnitKey>()
        for change in changes {
            let purchase = MetricsUpdate.UnitKey(
                bundleID: change.transaction.bundleID, originalTransactionID: change.transaction.originalTransactionID)
            if change.transaction.appUserID == nil, purchases.contains(purchase) {
                runs.append([])
                purchases = []
            }
            runs[runs.count - 1].append(change)
            purchases.insert(purchase)
        }
        var all: LedgerTransaction<([LedgerIngestOutcome], PurchaseChanges)> = .done(([], PurchaseChanges()))
        for run in runs where !run.isEmpty {
            all = all.then { outcomes, changes in
                try ingest(run, changes: changes).then { more, changes in .done((outcomes + more, changes)) }
            }
        }
        return all
    }

    /// The summaries the ingests ask for, by the place of their ingest: none for a purchase
    /// another customer keeps, or for a transaction that names no owner.
    static func summaries(
        _ changes: [LedgerIngest], _ outcomes: [LedgerIngestOutcome]
    ) -> [(index: Int, request: SummaryRequest)] {
        zip(changes, outcomes).enumerated().compactMap { index, ingest in
            let (change, outcome) = ingest
            guard let summary = change.summary, let owner = change.transaction.appUserID,
                !keptByAnother(change, outcome)
            else { return nil }
            return (
                index,
                SummaryRequest(
                    bundleID: change.transaction.bundleID, appUserID: owner, recent: summary.recent,
                    withJWS: summary.withJWS)
            )
        }
    }

    /// One run of a group (``ingest(_:)``): the owners of the transactions that name none, then
    /// the headers of their JWS not stored yet and the new rows, one statement each (a
    /// transaction twice in the run is written by its first ingest), then each ingest in turn.
    private static func ingest(
        _ run: [LedgerIngest], changes: PurchaseChanges
    ) throws -> LedgerTransaction<([LedgerIngestOutcome], PurchaseChanges)> {
        let unnamed = run.indices.filter { run[$0].transaction.appUserID == nil }
        return .run(unnamed.map { earliestOwner(of: run[$0].transaction) }) { rows in
            var found = run.map(\.transaction.appUserID)
            for (index, rows) in zip(unnamed, rows) {
                found[index] = try rows.first(LedgerColumn<String?>.self)?.value ?? nil
            }
            let owners = found
            var listed = Set<String>()
            let written = run.indices.filter { listed.insert(run[$0].transaction.transactionID).inserted }
            let rows = written.map { index in
                let transaction = run[index].transaction
                return TransactionRow(
                    transaction, owner: owners[index],
                    signedDigest: transaction.signedTransaction.map { (run[index].signedDigest ?? SignedDigest($0)).bytes })
            }
            // In key order: two writes inserting the same new headers wait for each other, never in a cycle.
            // The headers and the rows go in one round trip: a row's header is read only with its row.
            let (stored, headers) = TransactionRow.storedApart(rows)
            let headerInsert: [LedgerSQL] =
                headers.isEmpty ? [] : [try "INSERT INTO \(insert: headers) ON CONFLICT (digest) DO NOTHING"]
            let insert: LedgerSQL = try """
                INSERT INTO \(insert: stored) ON CONFLICT (transaction_id) DO NOTHING
                RETURNING transaction_id AS value
                """
            return .run(LedgerSQL.writes(headerInsert + [insert])) { inserted in
                let recorded = Set(try inserted[inserted.count - 1].decode(LedgerColumn<String>.self).map(\.value))
                var changes = changes
                for (index, row) in zip(written, rows) where recorded.contains(row.transactionID) {
                    changes.figures.record(FigureSource(row))
                    if PurchaseMetricChanges.keptInWrite(productType: row.productType) {
                        changes.metrics.replace(nil, with: row, signed: SignedMetricFields(run[index].transaction))
                    }
                }
                return try step(
                    0, of: run, owners: owners,
                    RunState(recorded: recorded, changes: changes, outcomes: [], writes: PendingWrites()))
            }
        }
    }

    /// What a run has done so far.
    private struct RunState: Sendable {
        /// The new rows whose ingest is still to come.
        var recorded: Set<String>
        var changes: PurchaseChanges
        var outcomes: [LedgerIngestOutcome]
        /// The events and credits of new rows, not written yet.
        var writes: PendingWrites
    }

    /// The ingest at `index` of a run, then the rest: a new row's event and credits are kept for
    /// later; a row held already is answered by ``held(_:owner:grants:changes:)`` after what
    /// was kept is written, and so is a move or a revocation, whose events come after them.
    private static func step(
        _ index: Int, of run: [LedgerIngest], owners: [String?], _ state: RunState
    ) throws -> LedgerTransaction<([LedgerIngestOutcome], PurchaseChanges)> {
        guard index < run.count else {
            return try state.writes.written().then { .done((state.outcomes, state.changes)) }
        }
        let change = run[index]
        let transaction = change.transaction
        var state = state
        let recorded: LedgerTransaction<(RecordOutcome, PurchaseChanges)>
        if state.recorded.remove(transaction.transactionID) != nil {
            try state.writes.recorded(
                transaction, owner: owners[index], ownerAssigned: false, grants: change.grants,
                quantity: Int(transaction.quantity), credits: transaction.revocationDate == nil)
            recorded = .done((.recorded, state.changes))
        } else {
            recorded = try state.writes.written().then { [state] in
                held(transaction, owner: owners[index], grants: change.grants, changes: state.changes)
            }
            state.writes = PendingWrites()
        }
        let before = state
        return recorded.then { recorded, changes in
            var state = before
            let outcome = LedgerIngestOutcome(recorded: recorded)
            let moves: Bool
            if case .ownedByAnotherCustomer = recorded { moves = !keptByAnother(change, outcome) } else { moves = false }
            let flushed: LedgerTransaction<Void>
            if moves || (transaction.revocationDate != nil && !keptByAnother(change, outcome)) {
                flushed = try state.writes.written()
                state.writes = PendingWrites()
            } else {
                flushed = .done(())
            }
            let after = state
            return flushed.then {
                try afterRecord(change, outcome: outcome, changes: changes).then { outcome, changes in
                    var state = after
                    state.outcomes.append(outcome)
                    state.changes = changes
                    return try step(index + 1, of: run, owners: owners, state)
                }
            }
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
                var writes = PendingWrites()
                try writes.recorded(
                    transaction, owner: owner, ownerAssigned: true, grants: grants, quantity: Int(assigned.quantity),
                    credits: assigned.revocationDate == nil && transaction.revocationDate == nil)
                return try writes.written().then { .done((.duplicate(ownerAssigned: true), result)) }
            }
        }
    }

    /// The owner of the earliest transaction of the same purchase, as `value`, for a transaction
    /// that names none. The index is named: ordered by purchase date, SQLite's planner could walk
    /// every transaction instead.
    static func earliestOwner(of transaction: RecordedTransaction) -> LedgerSQL {
        """
        SELECT app_user_id AS value FROM transactions \(.index("transactions_by_original"))
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

/// One customer's summary, asked for with the others of a group.
struct SummaryRequest: Sendable {
    var bundleID: String
    var appUserID: String
    var recent: Int
    var withJWS: Bool
}
