import AppStoreModels
import Foundation
import PostgresNIO

/// What the ledger reads: transactions, summaries, and the dashboard's pages.
extension PostgresLedger {
    public func customerSummary(
        bundleID: String, appUserID: String, recent: Int, withJWS: Bool
    ) async throws -> CustomerSummary {
        guard recent >= 0 else { throw LedgerStoreError(.invalidArgument, "recent must not be negative") }
        return try await read { connection in
            try await Self.summaries(
                [SummaryRequest(bundleID: bundleID, appUserID: appUserID, recent: recent, withJWS: withJWS)],
                on: connection)[0]
        }
    }

    /// The summaries as `connection` sees them (in a write transaction, with its writes), read
    /// with one statement (``SummaryStatement``), in the order asked.
    static func summaries(_ requests: [SummaryRequest], on connection: PostgresConnection) async throws -> [CustomerSummary] {
        guard !requests.isEmpty else { return [] }
        let rows = try await connection.rows(
            SummaryStatement(
                bundleIDs: requests.map(\.bundleID), appUserIDs: requests.map(\.appUserID),
                recent: requests.map { Int64($0.recent) }, withJWS: requests.map(\.withJWS)))
        var byOwner: [Int64: [PostgresRow]] = [:]
        for row in rows { byOwner[try row.makeRandomAccess()["owner"].decode(Int64.self), default: []].append(row) }
        return try requests.enumerated().map { index, request in
            try summary(byOwner[Int64(index + 1)] ?? [], bundleID: request.bundleID, appUserID: request.appUserID)
        }
    }

    /// The text of customers' summaries in one statement, after a `WITH` clause that names them
    /// as `owner` (`bundle_id`, `app_user_id`, `recent`, `with_jws`, and `n`, which each of its
    /// rows carries as `owner`). One row per item, told apart by `part`: 0 for each transaction
    /// that can grant access, 1 for each balance (`currency`, `amount`), 2 for the number of
    /// transactions (`amount`), 3 for each of the `recent` newest transactions.
    static let summary: String = {
        let columns = TransactionRow.selection(withJWS: false, table: "t.").replacingOccurrences(
            of: "NULL AS signed_transaction",
            with: "CASE WHEN owner.with_jws THEN \(TransactionRow.jws(table: "t.")) END AS signed_transaction")
        let blanks = Array(repeating: "NULL", count: TransactionRow.columns.count).joined(separator: ", ")
        let owner = SummaryStatements.Customer.listed
        // Each part is read customer by customer (`LATERAL`, kept apart from the outer query by
        // `OFFSET 0`), through the indexes on the customer's columns: a plan made once, while the
        // tables were small, must not join whole tables for every group later.
        return """
            SELECT owner.n AS owner, 0 AS part, access.* FROM owner CROSS JOIN LATERAL (
                \(SummaryStatements.access(owner, columns: "\(columns), NULL AS currency, NULL::BIGINT AS amount"))
                OFFSET 0) access
            UNION ALL
            SELECT owner.n, 1, \(blanks), b.currency, b.amount FROM owner CROSS JOIN LATERAL (
                \(SummaryStatements.balances(owner)) OFFSET 0) b
            UNION ALL
            SELECT owner.n, 2, \(blanks), NULL, (\(SummaryStatements.count(owner))) FROM owner
            UNION ALL
            SELECT owner.n, 3, recent.* FROM owner CROSS JOIN LATERAL (
                \(SummaryStatements.recent(owner, columns: "\(columns), NULL, NULL::BIGINT", limit: "owner.recent"))) recent
            """
    }()

    /// The summary the rows of ``summary`` describe: access transactions oldest first, recent ones
    /// newest first. Rows of other parts are left alone.
    private static func summary(_ rows: [PostgresRow], bundleID: String, appUserID: String) throws -> CustomerSummary {
        var summary = CustomerSummary(
            bundleID: bundleID, appUserID: appUserID, balances: [:], accessTransactions: [], recentTransactions: [],
            transactionCount: 0)
        for row in rows {
            let columns = row.makeRandomAccess()
            switch try columns["part"].decode(Int.self) {
            case 0: summary.accessTransactions.append(try transaction(row))
            case 1:
                summary.balances[try columns["currency"].decode(String.self)] = try columns["amount"].decode(Int64.self)
            case 2: summary.transactionCount = try columns["amount"].decode(Int.self)
            case 3: summary.recentTransactions.append(try transaction(row))
            default: continue
            }
        }
        summary.orderTransactions()
        return summary
    }

    /// The transaction stored with these signed bytes and its owner's summary (no recent
    /// transactions, no JWS), in one statement: the summary's rows, and the transaction as
    /// `part` 4.
    public func signedTransactionAndSummary(
        digest: SignedDigest
    ) async throws -> (known: KnownSignedTransaction, summary: CustomerSummary?)? {
        let parts: [PostgresRow] = try await Self.result(
            of: PostgresLookups.Lookup(digest: digest.bytes, deadline: .now + connectionWait), on: lookups)
        guard let row = try parts.first(where: { try $0.makeRandomAccess()["part"].decode(Int.self) == 4 }) else {
            return nil
        }
        let found = try Self.transaction(row)
        let known = KnownSignedTransaction(
            transactionID: found.transactionID, bundleID: found.bundleID, environment: found.environment,
            appUserID: found.appUserID)
        return (known, try found.appUserID.map { try Self.summary(parts, bundleID: found.bundleID, appUserID: $0) })
    }

    /// The transaction a `transactions` row records, its columns named as ``TransactionRow`` names them.
    static func transaction(_ row: PostgresRow) throws -> RecordedTransaction {
        try transactionRow(row).transaction()
    }

    /// A row whose columns are ``TransactionRow/selection(withJWS:table:)``'s.
    static func transactionRow(_ row: PostgresRow) throws -> TransactionRow {
        try TransactionRow(from: ColumnDecoder(row: row.makeRandomAccess()))
    }
}

/// Customers' summaries (``PostgresLedger/summary``) as a prepared statement: parsed and planned
/// once per connection.
struct SummaryStatement: PostgresPreparedStatement {
    static let sql = "WITH \(owners(from: 1))\n\(PostgresLedger.summary)"

    /// The `owner` clause of ``PostgresLedger/summary``: the customers as four arrays, bound from
    /// parameter `$first` on.
    static func owners(from first: Int) -> String {
        """
        owner AS (
            SELECT * FROM unnest($\(first)::TEXT[], $\(first + 1)::TEXT[], $\(first + 2)::BIGINT[], $\(first + 3)::BOOLEAN[])
                WITH ORDINALITY AS o(bundle_id, app_user_id, recent, with_jws, n))
        """
    }

    typealias Row = PostgresRow

    var bundleIDs: [String]
    var appUserIDs: [String]
    var recent: [Int64]
    var withJWS: [Bool]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        append(to: &bindings)
        return bindings
    }

    /// Binds the customers, in the order ``owners(from:)`` numbers them.
    func append(to bindings: inout PostgresBindings) {
        bindings.append(bundleIDs)
        bindings.append(appUserIDs)
        bindings.append(recent)
        bindings.append(withJWS)
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// The transactions stored with these signed bytes (`part` 4) and their owners' summaries without
/// recent transactions or JWS, as a prepared statement; each row carries, as `owner`, the place
/// of its digest in the list (from 1).
struct KnownDigestStatement: PostgresPreparedStatement {
    static let sql = """
        WITH known AS (
            SELECT wanted.n, found.* FROM unnest($1::BYTEA[]) WITH ORDINALITY AS wanted(digest, n)
            CROSS JOIN LATERAL (
                \(SummaryStatements.signed(digest: "wanted.digest", columns: TransactionRow.selection(withJWS: false)))
                LIMIT 1) found),
        owner AS (
            SELECT bundle_id, app_user_id, 0::BIGINT AS recent, FALSE AS with_jws, n FROM known
            WHERE app_user_id IS NOT NULL)
        \(PostgresLedger.summary)
        UNION ALL
        SELECT known.n, 4, \(TransactionRow.selection(withJWS: false, table: "known.")), NULL, NULL FROM known
        """
    typealias Row = PostgresRow

    var digests: [Data]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(digests.map { ByteBuffer(bytes: $0) })
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// Looks uploads up by the digest of their signed bytes: the lookups asked for while one runs wait
/// and run together, in one statement (``KnownDigestStatement``) on one leased connection. Each
/// is answered with the rows of its digest. A group waits for a connection until the deadline of
/// its oldest lookup only, so that no lookup waits longer than the connection wait in all, and
/// runs until a second after that deadline at most.
struct PostgresLookups: GroupCommitEngine {
    struct Lookup: Sendable {
        var digest: Data
        var deadline: ContinuousClock.Instant
    }

    let primary: PostgresPrimary
    let wait: Duration

    func commit(_ lookups: [Lookup], isolated: Bool) async throws -> [Result<any Sendable, any Error>] {
        let deadline = lookups.map(\.deadline).min() ?? .now
        guard deadline > .now else {
            throw LedgerStoreError(.unavailable, "no PostgreSQL connection within \(wait): unreachable or busy")
        }
        let (client, waiters) = try primary.pool()
        let rows = try await PostgresLedger.lease(
            client: client, waiters: waiters, wait: deadline - .now, limit: wait + .seconds(1), deadline: deadline + .seconds(1)
        ) {
            try await $0.rows(KnownDigestStatement(digests: lookups.map(\.digest)))
        }
        var byDigest = Array(repeating: [PostgresRow](), count: lookups.count)
        for row in rows { byDigest[try row.makeRandomAccess()["owner"].decode(Int.self) - 1].append(row) }
        return byDigest.map { .success($0) }
    }
}
