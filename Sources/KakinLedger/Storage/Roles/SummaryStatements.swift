import AppStoreModels
import Foundation

/// Customers' summaries (``CustomerSummary``), written once for both engines: any number of them
/// read with one statement, in a write (the summaries a group of ingests asks for) or on their own,
/// and the transactions found by the digests of their signed bytes with their owners' summaries.
enum SummaryStatements {
    /// The summaries asked for, in order, as the transaction running them sees them.
    static func summaries(_ requests: [SummaryRequest]) -> LedgerTransaction<[CustomerSummary]> {
        guard !requests.isEmpty else { return .done([]) }
        let owners: LedgerSQL = """
            k(n, bundle_id, app_user_id, with_jws) AS (VALUES \(rows: requests.enumerated().map { index, request in
                [.integer(Int64(index)), .text(request.bundleID), .text(request.appUserID), .integer(request.withJWS ? 1 : 0)]
            }))
            """
        var statement: LedgerSQL = "WITH \(owners)\n\(parts)"
        for (index, request) in requests.enumerated() where request.recent > 0 {
            let columns = TransactionRow.selection(withJWS: request.withJWS, table: "t.")
            statement = """
                \(statement)
                UNION ALL
                SELECT * FROM (
                    SELECT \(unescaped: "\(index)") AS owner, 3 AS part, \(unescaped: columns), NULL AS part_currency,
                        CAST(NULL AS BIGINT) AS part_amount
                    FROM transactions t WHERE t.bundle_id = \(request.bundleID) AND t.app_user_id = \(request.appUserID)
                    ORDER BY t.purchase_date DESC, t.transaction_id DESC LIMIT \(request.recent)) AS recent\(unescaped: "\(index)")
                """
        }
        return .run([statement]) { rows in
            let parts = try rows[0].decode(SummaryPart.self)
            return .done(
                try requests.enumerated().map { index, request in
                    try summary(parts.filter { $0.owner == index }, bundleID: request.bundleID, appUserID: request.appUserID)
                })
        }
    }

    /// The transactions stored with these signed bytes (found by their digests) and, for those
    /// with an owner, the owner's summary with no recent transactions and no JWS, in order; `nil`
    /// for bytes the ledger never stored. One statement, so one snapshot.
    static func known(digests: [Data]) -> LedgerTransaction<[(KnownSignedTransaction, CustomerSummary?)?]> {
        guard !digests.isEmpty else { return .done([]) }
        // The transaction's own columns are read from the index by digest alone; the others are NULL.
        let found = TransactionRow.columns.map { KnownColumn(rawValue: $0) == nil ? "NULL" : "known.\($0)" }
        let statement: LedgerSQL = """
            WITH d(n, digest) AS (VALUES \(rows: digests.enumerated().map { [.integer(Int64($0.offset)), .bytes($0.element)] })),
            known AS (
                SELECT d.n, \(unescaped: KnownColumn.allCases.map { "t." + $0.rawValue }.joined(separator: ", "))
                FROM d \(.joinInOrder) transactions t ON t.signed_digest = d.digest),
            k AS (SELECT n, bundle_id, app_user_id, 0 AS with_jws FROM known WHERE app_user_id IS NOT NULL)
            \(parts)
            UNION ALL
            SELECT known.n, 4, \(unescaped: found.joined(separator: ", ")), NULL, NULL FROM known
            """
        return .run([statement]) { rows in
            let parts = try rows[0].decode(SummaryPart.self)
            return .done(
                try digests.indices.map { index in
                    let mine = parts.filter { $0.owner == index }
                    guard let known = mine.first(where: { $0.part == 4 })?.known else { return nil }
                    return (
                        known, try known.appUserID.map { try summary(mine, bundleID: known.bundleID, appUserID: $0) }
                    )
                })
        }
    }

    /// What a lookup by digest reads of the transaction it finds.
    fileprivate enum KnownColumn: String, CaseIterable, CodingKey {
        case transactionID = "transaction_id"
        case bundleID = "bundle_id"
        case environment
        case appUserID = "app_user_id"
    }

    /// The parts of the summaries of the customers in `k` (`n`, `bundle_id`, `app_user_id`,
    /// `with_jws`), one row per item, each naming its customer's `n` as `owner` and told apart by
    /// `part`: 0 for each transaction that can grant access, 1 for each balance (`part_currency`,
    /// `part_amount`), 2 for the number of transactions (`part_amount`). (The recent transactions are part 3.)
    /// Each part is read customer by customer through the indexes on the customer's columns; the
    /// transactions that can grant access through the index that holds only those, which needs the
    /// kind written into the statement.
    private static let parts: LedgerSQL = {
        let columns = TransactionRow.selection(table: "t.").replacingOccurrences(
            of: "t.signed_transaction", with: "CASE WHEN k.with_jws = 1 THEN t.signed_transaction END AS signed_transaction")
        let blanks = Array(repeating: "NULL", count: TransactionRow.columns.count).joined(separator: ", ")
        let owned = "t.bundle_id = k.bundle_id AND t.app_user_id = k.app_user_id"
        return """
            SELECT k.n AS owner, 0 AS part, \(unescaped: columns), NULL AS part_currency, NULL AS part_amount
            FROM k \(.joinInOrder) transactions t ON \(unescaped: owned)
            WHERE t.product_type <> 'Consumable'
            UNION ALL
            SELECT k.n, 1, \(unescaped: blanks), b.currency, b.amount
            FROM k \(.joinInOrder) balances b ON b.bundle_id = k.bundle_id AND b.app_user_id = k.app_user_id
            UNION ALL
            SELECT k.n, 2, \(unescaped: blanks), NULL, (SELECT COUNT(*) FROM transactions t WHERE \(unescaped: owned)) FROM k
            """
    }()

    /// The summary `parts` describe: access transactions oldest first, recent ones newest first.
    private static func summary(_ parts: [SummaryPart], bundleID: String, appUserID: String) throws -> CustomerSummary {
        var summary = CustomerSummary(
            bundleID: bundleID, appUserID: appUserID, balances: [:], accessTransactions: [], recentTransactions: [],
            transactionCount: 0)
        for part in parts {
            switch (part.part, part.transaction, part.currency, part.amount) {
            case (0, let row?, _, _): summary.accessTransactions.append(try row.transaction())
            case (1, _, let currency?, let amount?): summary.balances[currency] = amount
            case (2, _, _, let amount?): summary.transactionCount = Int(amount)
            case (3, let row?, _, _): summary.recentTransactions.append(try row.transaction())
            default: continue
            }
        }
        summary.accessTransactions.sort { ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID) }
        summary.recentTransactions.sort { ($0.purchaseDate, $0.transactionID) > ($1.purchaseDate, $1.transactionID) }
        return summary
    }
}

/// A row of a summary statement (``SummaryStatements``): its customer, its part, and the
/// transaction, balance or count it holds.
private struct SummaryPart: Decodable {
    var owner: Int
    var part: Int
    var currency: String?
    var amount: Int64?
    var transaction: TransactionRow?
    /// The transaction a lookup by digest found (part 4).
    var known: KnownSignedTransaction?

    enum CodingKeys: String, CodingKey {
        case owner, part
        case currency = "part_currency"
        case amount = "part_amount"
    }

    init(from decoder: any Decoder) throws {
        let columns = try decoder.container(keyedBy: CodingKeys.self)
        owner = try columns.decode(Int.self, forKey: .owner)
        part = try columns.decode(Int.self, forKey: .part)
        currency = try columns.decodeIfPresent(String.self, forKey: .currency)
        amount = try columns.decodeIfPresent(Int64.self, forKey: .amount)
        transaction = [0, 3].contains(part) ? try TransactionRow(from: decoder) : nil
        guard part == 4 else { return }
        let found = try decoder.container(keyedBy: SummaryStatements.KnownColumn.self)
        known = KnownSignedTransaction(
            transactionID: try found.decode(String.self, forKey: .transactionID),
            bundleID: try found.decode(String.self, forKey: .bundleID),
            environment: AppStoreEnvironment(rawValue: try found.decode(String.self, forKey: .environment)),
            appUserID: try found.decodeIfPresent(String.self, forKey: .appUserID))
    }
}
