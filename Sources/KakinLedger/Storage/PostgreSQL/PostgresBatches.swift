import AppStoreModels
import Foundation
import SQLKit

/// The ledger's busiest work done for many requests in one statement (PostgreSQL), where each
/// statement costs a round trip and a fixed share of both the server's and the database's time:
/// - a writer's group records its new purchases, their credits, the balances they raise and their
///   events, and reads the summaries of their customers, in one statement that commits on its own
///   (``recordBatch(_:on:)``);
/// - the digest lookups and the summaries that requests ask for at the same moment are read
///   together (``BatchedRead``, ``signedTransactions(_:on:)``, ``summaries(_:on:)``).
///
/// The statements take their rows as multi-row `VALUES` lists of a power-of-two size up to 64, so
/// each connection prepares a few shapes and a batch of up to 64 is one statement. A list is filled
/// up to its size by repeating its last key or row, which the statement reads once.
extension SQLLedgerStore {
    /// A new purchase as the writer's batch takes it: what ``ingest(_:)`` was asked, when it asked
    /// for a summary.
    struct RecordBatchItem: Sendable {
        let transaction: RecordedTransaction
        let digest: Data?
        let unitCredits: [(currency: String, amount: Int64)]
        let recent: Int
        let withJWS: Bool
    }

    /// A summary a request reads: the customer, and whether the transactions carry their JWS.
    struct SummaryKey: Hashable, Sendable {
        let bundleID: String
        let appUserID: String
        let withJWS: Bool
    }

    /// The most rows or keys one batch statement takes.
    static let batchLimit = 64

    // MARK: A group's new purchases

    /// Records a group's new purchases (``RecordBatchItem``s) with their credits, balances and
    /// events, and reads their customers' summaries, in one statement per 64 purchases
    /// (``LedgerStatement/recordBatch(rows:)``), each committing on its own when it runs outside a
    /// transaction, as the writer runs it. The result of each item, as ``ingest(_:)`` returns it,
    /// or `nil` for the items the batch does not decide, whose job then runs alone: a purchase
    /// without owner, revoked, crediting more than one currency, the second of two items for one
    /// transaction, and every purchase the ledger held already.
    static func recordBatch(_ items: [any Sendable], on db: any SQLDatabase) async throws -> [(any Sendable)?] {
        var results = [(any Sendable)?](repeating: nil, count: items.count)
        var rows: [(index: Int, item: RecordBatchItem, values: [LedgerValue])] = []
        var transactionIDs = Set<String>()
        for (index, item) in items.enumerated() {
            guard let item = item as? RecordBatchItem, let owner = item.transaction.appUserID,
                item.transaction.revocationDate == nil, item.unitCredits.count <= 1, item.recent >= 0,
                transactionIDs.insert(item.transaction.transactionID).inserted
            else { continue }
            rows.append((index, item, try batchValues(item, owner: owner)))
        }
        for chunk in stride(from: 0, to: rows.count, by: batchLimit) {
            let part = rows[chunk..<min(chunk + batchLimit, rows.count)]
            do {
                try await recordChunk(part, into: &results, on: db)
            } catch where results.contains(where: { $0 != nil }) {
                // The statements before committed, and their jobs are answered: the rest run alone.
                return results
            }
        }
        return results
    }

    /// Records one statement's share of ``recordBatch(_:on:)``, setting the results of the items
    /// it recorded.
    private static func recordChunk(
        _ part: ArraySlice<(index: Int, item: RecordBatchItem, values: [LedgerValue])>,
        into results: inout [(any Sendable)?], on db: any SQLDatabase
    ) async throws {
        // Padded to a power of two by repeating the last purchase, which the statement reads once.
        var values: [LedgerValue] = []
        values.reserveCapacity(paddedSize(part.count) * LedgerStatement.recordBatchValues)
        for (ordinal, row) in padded(part).enumerated() {
            values += row.values + [.integer(min(ordinal, part.count - 1))]
        }
        var recorded = Set<String>()
        var parts: [SummaryKey: SummaryParts] = [:]
        for row in try await db.run(.recordBatch(rows: paddedSize(part.count)), values: values) {
            if try row.decode(column: "part", as: Int.self) == 3 {
                recorded.insert(try row.decode(column: "transaction_id", as: String.self))
                continue
            }
            let key = SummaryKey(
                bundleID: try row.decode(column: "bundle_id", as: String.self),
                appUserID: try row.decode(column: "app_user_id", as: String.self),
                withJWS: try row.decode(column: "with_jws", as: Int.self) != 0)
            try parts[key, default: SummaryParts()].add(row)
        }
        for row in part where recorded.contains(row.item.transaction.transactionID) {
            let transaction = row.item.transaction
            let key = SummaryKey(
                bundleID: transaction.bundleID, appUserID: transaction.appUserID ?? "", withJWS: row.item.withJWS)
            guard let found = parts[key] else {
                throw LedgerStoreError(.inconsistentState, "no summary for \(key.appUserID) after recording")
            }
            let recent =
                row.item.recent > 0
                ? try await page(
                    bundleID: key.bundleID, appUserID: key.appUserID, limit: row.item.recent, before: nil,
                    withJWS: key.withJWS, on: db) : []
            results[row.index] = LedgerIngestOutcome(
                recorded: .recorded, summary: found.summary(bundleID: key.bundleID, appUserID: key.appUserID, recent: recent))
        }
    }

    /// The values ``LedgerStatement/recordBatch(rows:)`` takes for `item`, all but its ordinal.
    private static func batchValues(_ item: RecordBatchItem, owner: String) throws -> [LedgerValue] {
        let transaction = item.transaction
        let now = LedgerTime.milliseconds(transaction.recordedAt)
        let credit = try item.unitCredits.first.map { currency, unit in
            try GrantCredit(
                currency: currency, unit: unit, quantity: transaction.quantity, of: transaction, owner: owner, at: now)
        }
        let around = try credit?.eventPayloadAroundBalance()
        let recordedEvent = eventJSON(recordedEventPayload(transaction, ownerAssigned: false))
        return [
            .text(transaction.transactionID), .text(transaction.originalTransactionID),
            .text(transaction.bundleID), .text(owner), .text(transaction.productID),
            .text(transaction.productType.rawValue), .integer(transaction.quantity),
            .integer(LedgerTime.milliseconds(transaction.purchaseDate)),
            .integer(transaction.expiresDate.map(LedgerTime.milliseconds)), .integer(nil as Int64?),
            .integer(nil as Int64?), .text(transaction.environment.rawValue),
            .text(transaction.appAccountToken), .text(transaction.signedTransaction),
            .text(transaction.source.rawValue), .integer(now), .text(transaction.periodType?.rawValue),
            .blob(item.digest),
            .text(credit?.currency), .integer(credit?.amount), .text(credit?.key),
            .integer(item.withJWS ? 1 : 0), .text(recordedEvent), .text(around?.head), .text(around?.tail),
        ]
    }

    // MARK: Reads for many requests

    /// The summaries (without recent transactions) of distinct `keys`, in one statement for the
    /// keys with JWS and one for those without.
    static func summaries(_ keys: [SummaryKey], on db: any SQLDatabase) async throws -> [SummaryKey: CustomerSummary] {
        var summaries: [SummaryKey: CustomerSummary] = [:]
        for withJWS in [false, true] {
            let customers = keys.filter { $0.withJWS == withJWS }
            for chunk in stride(from: 0, to: customers.count, by: batchLimit) {
                let part = customers[chunk..<min(chunk + batchLimit, customers.count)]
                let listed = padded(part)
                let values = listed.flatMap { key -> [LedgerValue] in [.text(key.bundleID), .text(key.appUserID)] }
                var parts: [SummaryKey: SummaryParts] = [:]
                for key in part { parts[key] = SummaryParts() }
                for row in try await db.run(.customerSummaries(customers: listed.count, withJWS: withJWS), values: values) {
                    let key = SummaryKey(
                        bundleID: try row.decode(column: "bundle_id", as: String.self),
                        appUserID: try row.decode(column: "app_user_id", as: String.self), withJWS: withJWS)
                    try parts[key]?.add(row)
                }
                for (key, found) in parts {
                    summaries[key] = found.summary(bundleID: key.bundleID, appUserID: key.appUserID, recent: [])
                }
            }
        }
        return summaries
    }

    /// The transactions stored with each of `digests`, in one statement per 64.
    static func signedTransactions(_ digests: [Data], on db: any SQLDatabase) async throws -> [Data: KnownSignedTransaction] {
        var found: [Data: KnownSignedTransaction] = [:]
        for chunk in stride(from: 0, to: digests.count, by: batchLimit) {
            let part = digests[chunk..<min(chunk + batchLimit, digests.count)]
            let values = padded(part).map(LedgerValue.blob)
            for row in try await db.run(.signedTransactions(count: values.count), values: values) {
                let digest = try row.decode(column: "signed_digest", as: Data.self)
                guard found[digest] == nil else { continue }
                found[digest] = try knownSignedTransaction(row)
            }
        }
        return found
    }

    /// What the ledger holds for signed bytes posted again: the transaction stored with them and,
    /// when it has an owner, the owner's summary (no recent transactions, no JWS).
    struct KnownDuplicate: Sendable {
        let known: KnownSignedTransaction
        let summary: CustomerSummary?
    }

    /// The transactions stored with each of `digests` and their owners' summaries, in one
    /// statement per 64: the lookup that finds a duplicate upload and the answer to it in one
    /// round trip.
    static func knownDuplicates(_ digests: [Data], on db: any SQLDatabase) async throws -> [Data: KnownDuplicate] {
        var found: [Data: KnownDuplicate] = [:]
        for chunk in stride(from: 0, to: digests.count, by: batchLimit) {
            let part = digests[chunk..<min(chunk + batchLimit, digests.count)]
            let values = padded(part).map(LedgerValue.blob)
            var known: [Data: KnownSignedTransaction] = [:]
            var parts: [SummaryKey: SummaryParts] = [:]
            for row in try await db.run(.knownDuplicates(count: values.count), values: values) {
                if try row.decode(column: "part", as: Int.self) == 3 {
                    known[try row.decode(column: "digest", as: Data.self)] = try knownSignedTransaction(row)
                    continue
                }
                let key = SummaryKey(
                    bundleID: try row.decode(column: "bundle_id", as: String.self),
                    appUserID: try row.decode(column: "app_user_id", as: String.self), withJWS: false)
                try parts[key, default: SummaryParts()].add(row)
            }
            for (digest, transaction) in known {
                let summary = transaction.appUserID.map { owner in
                    let key = SummaryKey(bundleID: transaction.bundleID, appUserID: owner, withJWS: false)
                    return parts[key, default: SummaryParts()].summary(
                        bundleID: transaction.bundleID, appUserID: owner, recent: [])
                }
                found[digest] = KnownDuplicate(known: transaction, summary: summary)
            }
        }
        return found
    }

    /// The smallest power of two that is at least `count` (and at least 1).
    static func paddedSize(_ count: Int) -> Int {
        var size = 1
        while size < count { size *= 2 }
        return size
    }

    /// `part` (not empty) padded to ``paddedSize(_:)`` by repeating its last element, which the
    /// batch statements read or write once.
    static func padded<Element>(_ part: ArraySlice<Element>) -> [Element] {
        Array(part) + Array(repeating: part[part.endIndex - 1], count: paddedSize(part.count) - part.count)
    }
}

/// A customer summary's parts as its statement returns them, one row per item told apart by
/// `part`: 0 for each transaction that can grant access, 1 for each balance, 2 for the number of
/// transactions.
struct SummaryParts {
    var access: [RecordedTransaction] = []
    var balances: [String: Int64] = [:]
    var count = 0

    mutating func add(_ row: any SQLRow) throws {
        switch try row.decode(column: "part", as: Int.self) {
        case 0: access.append(try LedgerRows.transaction(row))
        case 1: balances[try row.decode(column: "currency", as: String.self)] = try row.decode(column: "amount", as: Int64.self)
        default: count = try row.decode(column: "amount", as: Int.self)
        }
    }

    /// The summary, with the access transactions oldest first (by purchase date and transaction ID).
    func summary(bundleID: String, appUserID: String, recent: [RecordedTransaction]) -> CustomerSummary {
        CustomerSummary(
            bundleID: bundleID, appUserID: appUserID, balances: balances,
            accessTransactions: access.sorted { ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID) },
            recentTransactions: recent, transactionCount: count)
    }
}

extension LedgerStatement {
    /// New purchases with their single credits, the balances these raise, the events of both and
    /// their customers' summaries, for `rows` purchases (a power of two up to 64; a purchase listed
    /// more than once is read once, so a list is padded by repeating its last purchase), with
    /// ``recordBatchValues`` values each:
    /// - the 18 of ``LedgerWrite/insertTransaction`` (owner known, not revoked);
    /// - the credit's currency, amount and idempotency key (all `NULL` without a credit);
    /// - 1 when the summary carries the JWS of its transactions, 0 when not;
    /// - the body of the `transaction.recorded` event, and the body of the `balance.credited` event
    ///   before and after its balance (`NULL` without a credit);
    /// - the purchase's place in the list, which orders the events.
    ///
    /// A purchase the ledger holds already is left alone. Credits to one balance add up before it
    /// is raised once, and each credit's event carries the balance as the credits one after the
    /// other leave it: the raised balance less the credits to it listed later.
    ///
    /// The statement's parts all see the database as it was before it, so the summaries add what
    /// it writes to what it reads: the stored transactions and balances of each customer who has
    /// a new purchase, with the new purchases and the raised balances. It returns, for each such
    /// customer and `with_jws`, the summary's rows as ``customerSummaries(customers:withJWS:)``
    /// does (`part` 0 to 2), and one row per purchase inserted (`part` 3, with its `transaction_id`).
    static func recordBatch(rows: Int) -> LedgerStatement { recordBatches[rows.trailingZeroBitCount] }

    /// How many values ``recordBatch(rows:)`` takes for each purchase.
    static let recordBatchValues = 26

    private static let recordBatches: [LedgerStatement] = (0...6).map { power in
        let row = "(" + Array(repeating: "?", count: recordBatchValues).joined(separator: ", ") + ")"
        let names = LedgerRows.transactionColumns.components(separatedBy: ", ")
        func columns(of table: String) -> String {
            names.map { name in
                name == "signed_transaction"
                    ? "CASE WHEN wanted.with_jws = 1 THEN \(table).signed_transaction END AS signed_transaction"
                    : "\(table).\(name)"
            }.joined(separator: ", ")
        }
        let keyed = names.map { ["bundle_id", "app_user_id"].contains($0) ? "wanted.\($0)" : "NULL" }
            .joined(separator: ", ")
        let recordedColumns = names.map { $0 == "transaction_id" ? "recorded.transaction_id" : "NULL" }
            .joined(separator: ", ")
        let owned = "bundle_id = wanted.bundle_id AND app_user_id = wanted.app_user_id"
        return LedgerStatement(
            """
            WITH input AS (
                SELECT DISTINCT ON (transaction_id) * FROM (VALUES \(Array(repeating: row, count: 1 << power).joined(separator: ", ")))
                AS listed (\(LedgerRows.transactionColumns), signed_digest, credit_currency, credit_amount, credit_key,
                    with_jws, recorded_event, credited_head, credited_tail, ordinal)
                ORDER BY transaction_id),
            recorded AS (
                INSERT INTO transactions (\(LedgerRows.transactionColumns), signed_digest)
                SELECT \(LedgerRows.transactionColumns), signed_digest FROM input
                ON CONFLICT (transaction_id) DO NOTHING
                RETURNING transaction_id),
            fresh AS (SELECT input.* FROM input JOIN recorded ON recorded.transaction_id = input.transaction_id),
            credit AS (
                INSERT INTO ledger_entries (\(LedgerRows.ledgerColumns))
                SELECT 'credit', bundle_id, app_user_id, credit_currency, credit_amount, transaction_id, credit_key, 0, recorded_at
                FROM fresh WHERE credit_currency IS NOT NULL
                ON CONFLICT (idempotency_key) DO NOTHING
                RETURNING bundle_id, app_user_id, currency, amount, transaction_id),
            raised AS (
                INSERT INTO balances (bundle_id, app_user_id, currency, amount)
                SELECT bundle_id, app_user_id, currency, SUM(amount) FROM credit
                GROUP BY bundle_id, app_user_id, currency ORDER BY bundle_id, app_user_id, currency
                ON CONFLICT (bundle_id, app_user_id, currency) DO UPDATE SET amount = balances.amount + excluded.amount
                RETURNING bundle_id, app_user_id, currency, amount),
            event AS (
                INSERT INTO events (type, bundle_id, app_user_id, payload, created_at)
                SELECT type, bundle_id, app_user_id, payload, created_at FROM (
                    SELECT ordinal, 0 AS step, '\(LedgerEventType.transactionRecorded)' AS type, bundle_id, app_user_id,
                        recorded_event AS payload, recorded_at AS created_at
                    FROM fresh
                    UNION ALL
                    SELECT fresh.ordinal, 1, '\(LedgerEventType.balanceCredited)', fresh.bundle_id, fresh.app_user_id,
                        fresh.credited_head || (raised.amount - COALESCE(SUM(credit.amount) OVER (
                            PARTITION BY credit.bundle_id, credit.app_user_id, credit.currency ORDER BY fresh.ordinal
                            ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), 0))::TEXT || fresh.credited_tail,
                        fresh.recorded_at
                    FROM credit
                    JOIN fresh ON fresh.transaction_id = credit.transaction_id
                    JOIN raised ON raised.bundle_id = credit.bundle_id AND raised.app_user_id = credit.app_user_id
                        AND raised.currency = credit.currency) AS made
                ORDER BY ordinal, step),
            wanted AS (SELECT DISTINCT bundle_id, app_user_id, with_jws FROM fresh)
            SELECT 0 AS part, wanted.with_jws, \(columns(of: "found")), NULL AS currency, NULL::BIGINT AS amount
            FROM wanted CROSS JOIN LATERAL (
                (SELECT \(LedgerRows.transactionColumns) FROM transactions
                    WHERE \(owned) AND product_type <> 'Consumable' OFFSET 0)
                UNION ALL
                SELECT \(LedgerRows.transactionColumns) FROM fresh WHERE \(owned) AND product_type <> 'Consumable') AS found
            UNION ALL
            SELECT 1, wanted.with_jws, \(keyed), found.currency, found.amount FROM wanted CROSS JOIN LATERAL (
                (SELECT currency, amount FROM balances WHERE \(owned) AND NOT EXISTS (
                    SELECT 1 FROM raised WHERE raised.bundle_id = wanted.bundle_id
                        AND raised.app_user_id = wanted.app_user_id AND raised.currency = balances.currency) OFFSET 0)
                UNION ALL
                SELECT currency, amount FROM raised WHERE \(owned)) AS found
            UNION ALL
            SELECT 2, wanted.with_jws, \(keyed), NULL,
                (SELECT COUNT(*) FROM transactions WHERE \(owned)) + (SELECT COUNT(*) FROM fresh WHERE \(owned))
            FROM wanted
            UNION ALL
            SELECT 3, NULL, \(recordedColumns), NULL, NULL FROM recorded
            """)
    }

    /// The summaries of `customers` customers (a power of two up to 64; two values each, the app
    /// and the customer), as ``customerSummary(withJWS:)`` reads one, every row naming its
    /// customer in `bundle_id` and `app_user_id`.
    static func customerSummaries(customers: Int, withJWS: Bool) -> LedgerStatement {
        (withJWS ? summariesWithJWS : summariesWithoutJWS)[customers.trailingZeroBitCount]
    }

    private static let summariesWithJWS = (0...6).map { summaries(customers: 1 << $0, withJWS: true) }
    private static let summariesWithoutJWS = (0...6).map { summaries(customers: 1 << $0, withJWS: false) }

    // The reads look each key up on its own (`LATERAL`, kept from being merged into a join by
    // `OFFSET 0` or `LIMIT`), so that each is an index lookup whatever the table's statistics say:
    // on a table not analyzed yet, PostgreSQL would otherwise guess that a list of keys matches
    // a large part of it and scan it all.
    private static func summaries(customers: Int, withJWS: Bool) -> LedgerStatement {
        let columns = LedgerRows.transactionColumns(withJWS: withJWS)
        let keyed = columns.components(separatedBy: ", ").map { column in
            column == "bundle_id" || column == "app_user_id" ? "wanted.\(column)" : "NULL"
        }.joined(separator: ", ")
        let wanted = "bundle_id = wanted.bundle_id AND app_user_id = wanted.app_user_id"
        return LedgerStatement(
            """
            WITH wanted AS (
                SELECT DISTINCT bundle_id, app_user_id FROM (VALUES \(Array(repeating: "(?, ?)", count: customers).joined(separator: ", ")))
                AS listed (bundle_id, app_user_id))
            SELECT 0 AS part, found.* , NULL AS currency, NULL AS amount FROM wanted CROSS JOIN LATERAL (
                SELECT \(columns) FROM transactions WHERE \(wanted) AND product_type <> 'Consumable' OFFSET 0) AS found
            UNION ALL
            SELECT 1, \(keyed), found.currency, found.amount FROM wanted CROSS JOIN LATERAL (
                SELECT currency, amount FROM balances WHERE \(wanted) OFFSET 0) AS found
            UNION ALL
            SELECT 2, \(keyed), NULL, (SELECT COUNT(*) FROM transactions WHERE \(wanted)) FROM wanted
            """)
    }

    /// The transactions stored with any of `count` digests (a power of two up to 64) and the
    /// summaries of their owners, without JWS, in one statement: the summary's rows as
    /// ``customerSummaries(customers:withJWS:)`` returns them (`part` 0 to 2), then one row per
    /// transaction found (`part` 3) with its `digest`, `transaction_id`, `bundle_id`,
    /// `environment` and `app_user_id`.
    static func knownDuplicates(count: Int) -> LedgerStatement { duplicateLookups[count.trailingZeroBitCount] }

    private static let duplicateLookups: [LedgerStatement] = (0...6).map { power in
        let columns = LedgerRows.transactionColumns(withJWS: false)
        let names = columns.components(separatedBy: ", ")
        let keyed = names.map { ["bundle_id", "app_user_id"].contains($0) ? "owners.\($0)" : "NULL" }
            .joined(separator: ", ")
        let knownColumns = names.map {
            ["transaction_id", "bundle_id", "app_user_id", "environment"].contains($0) ? "known.\($0)" : "NULL"
        }.joined(separator: ", ")
        let owned = "bundle_id = owners.bundle_id AND app_user_id = owners.app_user_id"
        return LedgerStatement(
            """
            WITH known AS (
                SELECT wanted.digest, found.* FROM (
                    SELECT DISTINCT digest FROM (VALUES \(Array(repeating: "(?)", count: 1 << power).joined(separator: ", ")))
                    AS listed (digest)) AS wanted
                CROSS JOIN LATERAL (
                    SELECT transaction_id, bundle_id, environment, app_user_id FROM transactions
                    WHERE signed_digest = wanted.digest LIMIT 1) AS found),
            owners AS (SELECT DISTINCT bundle_id, app_user_id FROM known WHERE app_user_id IS NOT NULL)
            SELECT 0 AS part, found.*, NULL AS currency, NULL::BIGINT AS amount, NULL::BYTEA AS digest
            FROM owners CROSS JOIN LATERAL (
                SELECT \(columns) FROM transactions WHERE \(owned) AND product_type <> 'Consumable' OFFSET 0) AS found
            UNION ALL
            SELECT 1, \(keyed), found.currency, found.amount, NULL FROM owners CROSS JOIN LATERAL (
                SELECT currency, amount FROM balances WHERE \(owned) OFFSET 0) AS found
            UNION ALL
            SELECT 2, \(keyed), NULL, (SELECT COUNT(*) FROM transactions WHERE \(owned)), NULL FROM owners
            UNION ALL
            SELECT 3, \(knownColumns), NULL, NULL, known.digest FROM known
            """)
    }

    /// The transactions stored with any of `count` digests (a power of two up to 64), with the digest.
    static func signedTransactions(count: Int) -> LedgerStatement { digestLookups[count.trailingZeroBitCount] }

    private static let digestLookups: [LedgerStatement] = (0...6).map { power in
        LedgerStatement(
            """
            SELECT wanted.digest AS signed_digest, found.* FROM (
                SELECT DISTINCT digest FROM (VALUES \(Array(repeating: "(?)", count: 1 << power).joined(separator: ", ")))
                AS listed (digest)) AS wanted
            CROSS JOIN LATERAL (
                SELECT transaction_id, bundle_id, environment, app_user_id FROM transactions
                WHERE signed_digest = wanted.digest LIMIT 1) AS found
            """)
    }
}
