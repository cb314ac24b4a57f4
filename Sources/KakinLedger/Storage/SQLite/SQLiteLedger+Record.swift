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

    /// The parts of a customer's summary (``SummaryStatements``), the customer bound: the
    /// transactions that can grant access, oldest first, with and without their JWS; the number of
    /// transactions; the balances.
    static let summaryParts = (
        access: accessPart(withJWS: true), accessWithoutJWS: accessPart(withJWS: false),
        count: SummaryStatements.count(.bound), balances: SummaryStatements.balances(.bound))

    private static func accessPart(withJWS: Bool) -> String {
        SummaryStatements.access(.bound, columns: TransactionRow.selection(withJWS: withJWS))
            + " ORDER BY t.purchase_date, t.transaction_id"
    }

    /// The customer's newest transactions, with and without their JWS, the customer and the limit bound.
    private static let recentPart = (
        withJWS: SummaryStatements.recent(.bound, columns: TransactionRow.selection(withJWS: true), limit: "?"),
        withoutJWS: SummaryStatements.recent(.bound, columns: TransactionRow.selection(withJWS: false), limit: "?"))

    /// The transaction stored with a JWS of this digest, and its owner: read from the index by
    /// digest alone.
    static let signedPart = SummaryStatements.signed(
        digest: "?", columns: "transaction_id, bundle_id, environment, app_user_id")

    /// The summary as `db` sees it.
    static func summary(
        bundleID: String, appUserID: String, recent: Int, withJWS: Bool, _ db: Database
    ) throws -> CustomerSummary {
        let customer: StatementArguments = [bundleID, appUserID]
        let parts = summaryParts
        return CustomerSummary(
            bundleID: bundleID, appUserID: appUserID,
            balances: Dictionary(
                try db.rows(parts.balances, customer).map {
                    (try $0.decode(String.self, forColumn: "currency"), try $0.decode(Int64.self, forColumn: "amount"))
                }, uniquingKeysWith: +),
            accessTransactions: try db.transactions(withJWS ? parts.access : parts.accessWithoutJWS, customer),
            recentTransactions: recent > 0
                ? try db.transactions(
                    withJWS ? recentPart.withJWS : recentPart.withoutJWS, [bundleID, appUserID, recent]) : [],
            transactionCount: try db.row(parts.count, customer)?.decode(Int.self, forColumn: "n") ?? 0)
    }

    /// The transaction stored with a JWS of this digest and its owner's summary without recent
    /// transactions or JWS, in one statement: SQLite runs a statement on one snapshot of the
    /// database, so the read needs no transaction around it (``readStatementNow(_:)``). Its rows
    /// are told apart by `part`: 4 for the transaction (`a` to `d`: its ID, app, environment and
    /// owner, read from the index by digest alone), 0 for each transaction that can grant access
    /// (the transaction's columns), 1 for each balance (`a` and `b`: currency and amount), 2 for
    /// the number of transactions (`a`).
    static let knownDigest: String = {
        let owner = SummaryStatements.Customer(
            bundleID: "(SELECT bundle_id FROM found)", appUserID: "(SELECT app_user_id FROM found)")
        let named = TransactionRow.columns.map { "NULL AS \($0)" }.joined(separator: ", ")
        let blanks = Array(repeating: "NULL", count: TransactionRow.columns.count).joined(separator: ", ")
        let access = SummaryStatements.access(owner, columns: TransactionRow.selection(withJWS: false, table: "t."))
        return """
            WITH found AS (\(signedPart) LIMIT 1)
            SELECT 4 AS part, transaction_id AS a, bundle_id AS b, environment AS c, app_user_id AS d, \(named) FROM found
            UNION ALL
            SELECT 0, NULL, NULL, NULL, NULL, access.* FROM (\(access)) access
            UNION ALL
            SELECT 1, b.currency, b.amount, NULL, NULL, \(blanks) FROM (\(SummaryStatements.balances(owner))) b
            UNION ALL
            SELECT 2, (\(SummaryStatements.count(owner))), NULL, NULL, NULL, \(blanks) FROM found
            WHERE app_user_id IS NOT NULL
            """
    }()

    public func signedTransactionAndSummary(
        digest: SignedDigest
    ) async throws -> (known: KnownSignedTransaction, summary: CustomerSummary?)? {
        let rows = try readStatementNow { db in
            try Row.fetchAll(db.cachedStatement(sql: Self.knownDigest), arguments: [digest.bytes])
        }
        guard let row = rows.first(where: { $0["part"] as Int? == 4 }) else { return nil }
        let known = KnownSignedTransaction(
            transactionID: try row.value("a"), bundleID: try row.value("b"),
            environment: AppStoreEnvironment(rawValue: try row.value("c")), appUserID: try row.value("d"))
        guard let owner = known.appUserID else { return (known, nil) }
        var summary = CustomerSummary(
            bundleID: known.bundleID, appUserID: owner, balances: [:],
            accessTransactions: try SQLiteRows(rows: rows.filter { $0["part"] as Int? == 0 }).decode(TransactionRow.self)
                .map { try $0.transaction() }
                .sorted { ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID) },
            recentTransactions: [], transactionCount: 0)
        for row in rows {
            switch row["part"] as Int? {
            case 1: summary.balances[try row.value("a"), default: 0] += try row.value("b", Int64.self)
            case 2: summary.transactionCount = try row.value("a")
            default: continue
            }
        }
        return (known, summary)
    }
}
