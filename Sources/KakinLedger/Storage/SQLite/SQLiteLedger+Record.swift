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
        if change.summary == nil, transaction.revocationDate == nil, let owner = transaction.appUserID,
            case .known(let stored) = try await read({ db in
                try Self.perform(IngestStatements.owner(ofStored: transaction.transactionID), db)
            }),
            stored == owner
        {
            return LedgerIngestOutcome(recorded: .duplicate(ownerAssigned: false))
        }
        return try await submit(.ingest(change))
    }

    /// Applies consecutive ingests of one group, in order, in the write open on `db`
    /// (``IngestStatements/ingest(_:)``), then reads the summaries they ask for with one statement.
    static func ingest(_ changes: [LedgerIngest], _ db: Database) throws -> [LedgerIngestOutcome] {
        guard !changes.isEmpty else { return [] }
        var (outcomes, changed) = try perform(IngestStatements.ingest(changes), db)
        try apply(changed, db)
        let wanted = IngestStatements.summaries(changes, outcomes)
        let summaries = try perform(SummaryStatements.summaries(wanted.map(\.request)), db)
        for (wanted, summary) in zip(wanted, summaries) { outcomes[wanted.index].summary = summary }
        return outcomes
    }

    // MARK: Reading transactions

    public func customerSummary(
        bundleID: String, appUserID: String, recent: Int, withJWS: Bool
    ) async throws -> CustomerSummary {
        guard recent >= 0 else { throw LedgerStoreError(.invalidArgument, "recent must not be negative") }
        let request = SummaryRequest(bundleID: bundleID, appUserID: appUserID, recent: recent, withJWS: withJWS)
        return try readNow { db in try Self.perform(SummaryStatements.summaries([request]), db)[0] }
    }

    public func signedTransactionAndSummary(
        digest: SignedDigest
    ) async throws -> (known: KnownSignedTransaction, summary: CustomerSummary?)? {
        try readNow { db in try Self.perform(SummaryStatements.known(digests: [digest.bytes]), db)[0] }
    }
}
