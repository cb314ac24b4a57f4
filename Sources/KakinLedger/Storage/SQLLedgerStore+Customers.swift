import Foundation
import SQLKit

extension SQLLedgerStore {
    /// What a customer answer needs, read from one snapshot and bounded whatever the history:
    /// balances, the transactions that can grant access (every non-consumable row), the `recent`
    /// newest transactions, and how many transactions there are in all.
    public func customerSummary(bundleID: String, appUserID: String, recent: Int) async throws -> CustomerSummary {
        try await customerSummary(bundleID: bundleID, appUserID: appUserID, recent: recent, withJWS: true)
    }

    /// ``customerSummary(bundleID:appUserID:recent:)``, reading each transaction's signed JWS only
    /// when `withJWS` (most answers do not carry it, and it is most of a row's bytes).
    public func customerSummary(
        bundleID: String, appUserID: String, recent: Int, withJWS: Bool
    ) async throws -> CustomerSummary {
        guard recent >= 0 else { throw LedgerStoreError(.invalidArgument, "recent must not be negative") }
        let read: @Sendable (any SQLDatabase) async throws -> CustomerSummary = { db in
            try await Self.summary(bundleID: bundleID, appUserID: appUserID, recent: recent, withJWS: withJWS, on: db)
        }
        // Without recent transactions the summary is one statement, which sees one state on its own
        // (on PostgreSQL read with the summaries other requests ask for at the same moment).
        guard recent == 0 else { return try await reading(read) }
        if let postgres {
            let key = SummaryKey(bundleID: bundleID, appUserID: appUserID, withJWS: withJWS)
            guard let summary = try await postgres.summaryReads.read(key) else {
                throw LedgerStoreError(.inconsistentState, "a batch of summaries left out \(appUserID)")
            }
            return summary
        }
        return try await readingStatement(read)
    }

    /// The summary as `db` sees it (a transaction's snapshot).
    static func summary(
        bundleID: String, appUserID: String, recent: Int, withJWS: Bool, on db: any SQLDatabase
    ) async throws -> CustomerSummary {
        let customer: [LedgerValue] = [.text(bundleID), .text(appUserID)]
        var parts = SummaryParts()
        for row in try await db.run(.customerSummary(withJWS: withJWS), values: customer + customer + customer) {
            try parts.add(row)
        }
        let newest = try await page(
            bundleID: bundleID, appUserID: appUserID, limit: recent, before: nil, withJWS: withJWS, on: db)
        return parts.summary(bundleID: bundleID, appUserID: appUserID, recent: newest)
    }

    /// A customer's transactions, newest first (by purchase date, then transaction ID), at most
    /// `limit`, strictly after `cursor` in that order.
    public func transactions(
        bundleID: String, appUserID: String, limit: Int, after cursor: TransactionCursor?
    ) async throws -> [RecordedTransaction] {
        guard limit >= 0 else { throw LedgerStoreError(.invalidArgument, "limit must not be negative") }
        return try await Self.page(
            bundleID: bundleID, appUserID: appUserID, limit: limit, before: cursor, withJWS: true, on: database)
    }

    static func page(
        bundleID: String, appUserID: String, limit: Int, before cursor: TransactionCursor?, withJWS: Bool,
        on db: any SQLDatabase
    ) async throws -> [RecordedTransaction] {
        guard limit > 0 else { return [] }
        let columns = LedgerRows.transactionColumns(withJWS: withJWS)
        if let cursor {
            let date = LedgerTime.milliseconds(cursor.purchaseDate)
            return try await db.raw(
                """
                SELECT \(unsafeRaw: columns) FROM transactions
                WHERE bundle_id = \(bind: bundleID) AND app_user_id = \(bind: appUserID)
                  AND (purchase_date < \(bind: date)
                       OR (purchase_date = \(bind: date) AND transaction_id < \(bind: cursor.transactionID)))
                ORDER BY purchase_date DESC, transaction_id DESC
                LIMIT \(bind: limit)
                """
            ).rows().map(LedgerRows.transaction)
        }
        return try await db.run(
            .newestTransactions(withJWS: withJWS), .text(bundleID), .text(appUserID), .integer(limit)
        ).map(LedgerRows.transaction)
    }
}
