import Foundation
import PostgresNIO

/// Recording purchases: a writer's consecutive ingests in one group.
extension PostgresLedger {
    /// Records, moves, revokes and summarizes as ``LedgerStore/ingest(_:)`` says, in one write
    /// transaction. A purchase already held for the same customer, with no revocation and no
    /// summary asked (a notification or a reconciliation about a known purchase), is answered
    /// from a read: owners never go back to unknown and rows are never deleted.
    public func ingest(_ change: LedgerIngest) async throws -> LedgerIngestOutcome {
        try LedgerRules.validate(change)
        let transaction = change.transaction
        if change.summary == nil, transaction.revocationDate == nil, let owner = transaction.appUserID,
            try await read({
                try await Self.perform(IngestStatements.owner(ofStored: transaction.transactionID), on: $0)
            }) == .known(owner)
        {
            return LedgerIngestOutcome(recorded: .duplicate(ownerAssigned: false))
        }
        return try await submit(for: transaction.appUserID ?? transaction.originalTransactionID, .ingest(change))
    }

    /// Applies consecutive ingests of one group, in order, on `connection`
    /// (``IngestStatements/ingest(_:)``), then reads the summaries they ask for with one statement.
    static func ingest(_ changes: [LedgerIngest], on connection: PostgresConnection) async throws -> [LedgerIngestOutcome] {
        guard !changes.isEmpty else { return [] }
        var (outcomes, changed) = try await perform(IngestStatements.ingest(changes), on: connection)
        let wanted = IngestStatements.summaries(changes, outcomes)
        let summaries = try await summaries(wanted.map(\.request), on: connection)
        try await apply(changed, on: connection)
        for (wanted, summary) in zip(wanted, summaries) { outcomes[wanted.index].summary = summary }
        return outcomes
    }
}

