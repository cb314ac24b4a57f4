import AppStoreModels
import Foundation

/// Customers' summaries (``CustomerSummary``), written once for both engines: any number of them
/// read with one statement, in a write (the summaries a group of ingests asks for) or on their own,
/// and the transactions found by the digests of their signed bytes with their owners' summaries.
enum SummaryStatements {
    /// The summaries asked for, in order, as the transaction running them sees them: the
    /// transactions that can grant access, the balances and the counts of all of them with one
    /// statement each, read customer by customer through the indexes on the customer's columns
    /// (those that can grant access through the index that holds only those, which needs the kind
    /// written into the statement), and the recent transactions of each that asks for them.
    static func summaries(_ requests: [SummaryRequest]) -> LedgerTransaction<[CustomerSummary]> {
        guard !requests.isEmpty else { return .done([]) }
        let k: LedgerSQL = """
            WITH k(n, bundle_id, app_user_id, with_jws) AS (VALUES \(rows: requests.enumerated().map { index, request in
                [.integer(Int64(index)), .text(request.bundleID), .text(request.appUserID), .integer(request.withJWS ? 1 : 0)]
            }))
            """
        let owned = "t.bundle_id = k.bundle_id AND t.app_user_id = k.app_user_id"
        let recent = requests.filter { $0.recent > 0 }
        let statements: [LedgerSQL] = [
            """
            \(k)
            SELECT k.n AS owner, \(unescaped: accessColumns) FROM k \(.joinInOrder) transactions t ON \(unescaped: owned)
            WHERE t.product_type <> 'Consumable'
            """,
            """
            \(k)
            SELECT k.n AS owner, b.currency AS currency, b.amount AS amount
            FROM k \(.joinInOrder) balances b ON b.bundle_id = k.bundle_id AND b.app_user_id = k.app_user_id
            """,
            "\(k)\nSELECT k.n AS owner, (SELECT COUNT(*) FROM transactions t WHERE \(unescaped: owned)) AS value FROM k",
        ] + recent.map {
            TransactionStatements.page(
                bundleID: $0.bundleID, appUserID: $0.appUserID, limit: $0.recent, before: nil, withJWS: $0.withJWS)
        }
        return .run(statements) { rows in
            var summaries = requests.map {
                CustomerSummary(
                    bundleID: $0.bundleID, appUserID: $0.appUserID, balances: [:], accessTransactions: [],
                    recentTransactions: [], transactionCount: 0)
            }
            for row in try rows[0].decode(Owned<TransactionRow>.self) {
                summaries[row.owner].accessTransactions.append(try row.value.transaction())
            }
            for row in try rows[1].decode(Owned<BalanceLine>.self) {
                summaries[row.owner].balances[row.value.currency] = row.value.amount
            }
            for row in try rows[2].decode(Owned<LedgerColumn<Int64>>.self) {
                summaries[row.owner].transactionCount = Int(row.value.value)
            }
            var page = 3
            for index in summaries.indices where requests[index].recent > 0 {
                summaries[index].recentTransactions = try rows[page].decode(TransactionRow.self).map { try $0.transaction() }
                page += 1
            }
            for index in summaries.indices {
                summaries[index].accessTransactions.sort {
                    ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID)
                }
            }
            return .done(summaries)
        }
    }

    /// The columns of a transaction that can grant access, its JWS when its customer asks for it.
    private static let accessColumns = TransactionRow.selection(table: "t.").replacingOccurrences(
        of: "t.signed_transaction", with: "CASE WHEN k.with_jws = 1 THEN t.signed_transaction END AS signed_transaction")

    /// The columns a lookup by digest reads.
    private static let knownColumns = KnownColumn.allCases.dropFirst().map { "t." + $0.rawValue }.joined(separator: ", ")

    /// The transactions stored with these signed bytes (found by their digests, through the index
    /// that holds what is read of them) and, for those with an owner, the owner's summary with no
    /// recent transactions and no JWS, read after them in the same transaction; in order, `nil`
    /// for bytes the ledger never stored.
    static func known(digests: [Data]) -> LedgerTransaction<[(KnownSignedTransaction, CustomerSummary?)?]> {
        guard !digests.isEmpty else { return .done([]) }
        let statement: LedgerSQL = """
            WITH d(n, digest) AS (VALUES \(rows: digests.enumerated().map { [.integer(Int64($0.offset)), .bytes($0.element)] }))
            SELECT d.n AS owner, \(unescaped: knownColumns)
            FROM d \(.joinInOrder) transactions t ON t.signed_digest = d.digest
            """
        return .run([statement]) { rows in
            var found: [KnownSignedTransaction?] = Array(repeating: nil, count: digests.count)
            for row in try rows[0].decode(KnownRow.self) where found.indices.contains(row.owner) {
                found[row.owner] = row.known
            }
            let owned = found.compactMap { known -> SummaryRequest? in
                guard let known, let owner = known.appUserID else { return nil }
                return SummaryRequest(bundleID: known.bundleID, appUserID: owner, recent: 0, withJWS: false)
            }
            let known = found
            return summaries(owned).then { summaries in
                var next = summaries.makeIterator()
                return .done(known.map { known in known.map { ($0, $0.appUserID == nil ? nil : next.next()) } })
            }
        }
    }

    /// What a lookup by digest reads of the transaction it finds, after the place of its digest.
    fileprivate enum KnownColumn: String, CaseIterable, CodingKey {
        case owner
        case transactionID = "transaction_id"
        case bundleID = "bundle_id"
        case environment
        case appUserID = "app_user_id"
    }
}

/// A row that names the place of the summary it belongs to (`owner`), and `Value` read from its
/// other columns.
private struct Owned<Value: Decodable>: Decodable {
    var owner: Int
    var value: Value

    enum CodingKeys: String, CodingKey { case owner }

    init(from decoder: any Decoder) throws {
        owner = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .owner)
        value = try Value(from: decoder)
    }
}

/// A transaction a lookup by digest found, and the place of its digest (`owner`).
private struct KnownRow: Decodable {
    var owner: Int
    var known: KnownSignedTransaction

    init(from decoder: any Decoder) throws {
        let columns = try decoder.container(keyedBy: SummaryStatements.KnownColumn.self)
        owner = try columns.decode(Int.self, forKey: .owner)
        known = KnownSignedTransaction(
            transactionID: try columns.decode(String.self, forKey: .transactionID),
            bundleID: try columns.decode(String.self, forKey: .bundleID),
            environment: AppStoreEnvironment(rawValue: try columns.decode(String.self, forKey: .environment)),
            appUserID: try columns.decodeIfPresent(String.self, forKey: .appUserID))
    }
}
