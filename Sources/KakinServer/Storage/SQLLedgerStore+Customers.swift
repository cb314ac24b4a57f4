public import Foundation
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
        // Without recent transactions the summary is one statement, which sees one state on its own.
        return recent == 0 ? try await readingStatement(read) : try await reading(read)
    }

    /// The summary as `db` sees it (a transaction's snapshot).
    static func summary(
        bundleID: String, appUserID: String, recent: Int, withJWS: Bool, on db: any SQLDatabase
    ) async throws -> CustomerSummary {
        let customer: [LedgerValue] = [.text(bundleID), .text(appUserID)]
        let rows = try await db.run(.customerSummary(withJWS: withJWS), values: customer + customer + customer)
        var access: [RecordedTransaction] = []
        var balances: [String: Int64] = [:]
        var count = 0
        for row in rows {
            switch try row.decode(column: "part", as: Int.self) {
            case 0: access.append(try LedgerRows.transaction(row))
            case 1: balances[try row.decode(column: "currency", as: String.self)] = try row.decode(column: "amount", as: Int64.self)
            default: count = try row.decode(column: "amount", as: Int.self)
            }
        }
        // Oldest first, as stored order by purchase date and transaction ID.
        access.sort { ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID) }
        let newest = try await page(
            bundleID: bundleID, appUserID: appUserID, limit: recent, before: nil, withJWS: withJWS, on: db)
        return CustomerSummary(
            bundleID: bundleID, appUserID: appUserID, balances: balances, accessTransactions: access,
            recentTransactions: newest, transactionCount: count)
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

    private static func page(
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
