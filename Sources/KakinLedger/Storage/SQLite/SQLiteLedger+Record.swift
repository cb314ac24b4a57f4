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
        return try readStatementNow { db in
            try Self.summary(bundleID: bundleID, appUserID: appUserID, recent: recent, withJWS: withJWS, db)
        }
    }

    /// A customer's summary in one statement, of the parts ``SummaryStatements`` defines, for the
    /// customer `customer` names. Its rows are told apart by `part`: 0 for each transaction that
    /// can grant access and 3 for each of the `recent` newest (the transaction's columns, the JWS
    /// only when `withJWS`), 1 for each balance (`a` and `b`: currency and amount), 2 for the
    /// number of transactions (`a`). Each part is read through the customer's indexes.
    static func summaryStatement(_ customer: SummaryStatements.Customer, recent: String, withJWS: Bool) -> String {
        let blanks = Array(repeating: "NULL", count: TransactionRow.columns.count).joined(separator: ", ")
        let columns = TransactionRow.selection(withJWS: withJWS, table: "t.")
        return """
            SELECT 0 AS part, NULL AS a, NULL AS b, NULL AS c, NULL AS d, access.*
            FROM (\(SummaryStatements.access(customer, columns: columns))) access
            UNION ALL
            SELECT 1, b.currency, b.amount, NULL, NULL, \(blanks) FROM (\(SummaryStatements.balances(customer))) b
            UNION ALL
            SELECT 2, (\(SummaryStatements.count(customer))), NULL, NULL, NULL, \(blanks)
            UNION ALL
            SELECT 3, NULL, NULL, NULL, NULL, recent.*
            FROM (\(SummaryStatements.recent(customer, columns: columns, limit: recent))) recent
            """
    }

    /// ``summaryStatement(_:recent:withJWS:)`` for a bound customer: the app as `?1`, the app user
    /// ID as `?2`, how many recent transactions as `?3`.
    static let summaries = (
        withJWS: summaryStatement(.numbered, recent: "?3", withJWS: true),
        withoutJWS: summaryStatement(.numbered, recent: "?3", withJWS: false))

    /// The transaction stored with a JWS of this digest, and its owner: read from the index by
    /// digest alone.
    static let signedPart = SummaryStatements.signed(
        digest: "?", columns: "transaction_id, bundle_id, environment, app_user_id")

    /// The summary as `db` sees it, read by one statement.
    static func summary(
        bundleID: String, appUserID: String, recent: Int, withJWS: Bool, _ db: Database
    ) throws -> CustomerSummary {
        let rows = try db.rows(withJWS ? summaries.withJWS : summaries.withoutJWS, [bundleID, appUserID, recent])
        return try summary(rows, bundleID: bundleID, appUserID: appUserID)
    }

    /// The summary the rows of ``summaryStatement(_:recent:withJWS:)`` describe: access transactions
    /// oldest first, recent ones newest first. Rows of other parts are left alone.
    static func summary(_ rows: [Row], bundleID: String, appUserID: String) throws -> CustomerSummary {
        func transactions(_ part: Int) throws -> [RecordedTransaction] {
            try SQLiteRows(rows: rows.filter { $0["part"] as Int? == part }).decode(TransactionRow.self)
                .map { try $0.transaction() }
        }
        var summary = CustomerSummary(
            bundleID: bundleID, appUserID: appUserID, balances: [:], accessTransactions: try transactions(0),
            recentTransactions: try transactions(3), transactionCount: 0)
        for row in rows {
            switch row["part"] as Int? {
            case 1: summary.balances[try row.value("a"), default: 0] += try row.value("b", Int64.self)
            case 2: summary.transactionCount = try row.value("a")
            default: continue
            }
        }
        summary.orderTransactions()
        return summary
    }

    /// The transaction stored with a JWS of this digest and its owner's summary without recent
    /// transactions or JWS, in one statement: SQLite runs a statement on one snapshot of the
    /// database, so the read needs no transaction around it (``readStatementNow(_:)``). Its rows
    /// are those of ``summaryStatement(_:recent:withJWS:)`` for the owner, and one of `part` 4
    /// for the transaction (`a` to `d`: its ID, app, environment and owner, read from the index by
    /// digest alone).
    static let knownDigest: String = {
        let owner = SummaryStatements.Customer(
            bundleID: "(SELECT bundle_id FROM found)", appUserID: "(SELECT app_user_id FROM found)")
        let named = TransactionRow.columns.map { "NULL AS \($0)" }.joined(separator: ", ")
        return """
            WITH found AS (\(signedPart) LIMIT 1)
            SELECT 4 AS part, transaction_id AS a, bundle_id AS b, environment AS c, app_user_id AS d, \(named)
            FROM found
            UNION ALL
            \(summaryStatement(owner, recent: "0", withJWS: false))
            """
    }()

    public func signedTransactionAndSummary(
        digest: SignedDigest
    ) async throws -> (known: KnownSignedTransaction, summary: CustomerSummary?)? {
        let rows = try readStatementNow { db in try db.rows(Self.knownDigest, [digest.bytes]) }
        guard let row = rows.first(where: { $0["part"] as Int? == 4 }) else { return nil }
        let known = KnownSignedTransaction(
            transactionID: try row.value("a"), bundleID: try row.value("b"),
            environment: AppStoreEnvironment(rawValue: try row.value("c")), appUserID: try row.value("d"))
        return (known, try known.appUserID.map { try Self.summary(rows, bundleID: known.bundleID, appUserID: $0) })
    }
}
