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
    /// (``IngestStatements/ingest(_:)``), with the summaries they ask for.
    static func ingest(_ changes: [LedgerIngest], _ db: Database) throws -> [LedgerIngestOutcome] {
        guard !changes.isEmpty else { return [] }
        var (outcomes, changed) = try perform(IngestStatements.ingest(changes), db)
        try apply(changed, db)
        for (index, request) in IngestStatements.summaries(changes, outcomes) {
            outcomes[index].summary = try summary(
                bundleID: request.bundleID, appUserID: request.appUserID, recent: request.recent,
                withJWS: request.withJWS, db)
        }
        return outcomes
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
            balances: Dictionary(
                try db.rows(BalanceRow.all(bundleID: bundleID, appUserID: appUserID)).map {
                    (try $0.decode(String.self, forColumn: "currency"), try $0.decode(Int64.self, forColumn: "amount"))
                }, uniquingKeysWith: +),
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
