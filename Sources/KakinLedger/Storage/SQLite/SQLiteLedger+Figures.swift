import AppStoreModels
import Foundation
import GRDB

/// The dashboard's bounded reads: the overview's figures and the customers page.
extension SQLiteLedger {
    public func dailyFigures(bundleID: String, days: Range<Int>, now: Date) async throws -> DailyFiguresPeriod {
        let moment = LedgerTime.milliseconds(now)
        let today = Int(DailyFigures.floorDivide(moment, DailyFigures.dayLength))
        let tomorrow = Int64(today + 1) * DailyFigures.dayLength
        return try await read { db in
            let figures = try db.rows(
                """
                SELECT day, product_id, currency, environment, purchases, refunds, revenue, subscription_starts,
                    subscription_ends
                FROM daily_figures WHERE bundle_id = ? AND day >= ? AND day < ?
                ORDER BY day, product_id, currency, environment
                """, [bundleID, days.lowerBound, days.upperBound]
            ).map { row in
                let currency: String = try row.value("currency")
                return DailyFigures(
                    day: try row.value("day"), productID: try row.value("product_id"),
                    currency: currency.isEmpty ? nil : currency,
                    environment: AppStoreEnvironment(rawValue: try row.value("environment")),
                    purchases: try row.value("purchases"), refunds: try row.value("refunds"),
                    revenue: try row.value("revenue"), subscriptionStarts: try row.value("subscription_starts"),
                    subscriptionEnds: try row.value("subscription_ends"))
            }
            let sums = try db.row(
                """
                SELECT COALESCE(SUM(CASE WHEN day < ? THEN subscription_starts - subscription_ends END), 0) AS before,
                    COALESCE(SUM(CASE WHEN day <= ? THEN subscription_starts - subscription_ends END), 0) AS through
                FROM daily_figures WHERE bundle_id = ? AND day <= ?
                """, [days.lowerBound, today, bundleID, max(days.lowerBound - 1, today)])
            let endingLater = try db.row(
                """
                SELECT COUNT(*) AS n FROM transactions
                WHERE bundle_id = ? AND environment IN (\(Database.placeholders(AppStoreEnvironment.knownValues.count)))
                  AND expires_date > ? AND expires_date < ?
                  AND product_type = 'Auto-Renewable Subscription'
                  AND (revocation_date IS NULL OR revocation_date > ?) AND purchase_date < ?
                """,
                StatementArguments([bundleID])
                    + StatementArguments(AppStoreEnvironment.knownValues.map(\.rawValue))
                    + [moment, tomorrow, moment, moment])
            return DailyFiguresPeriod(
                figures: figures, subscriptionsActiveBefore: try sums?.value("before") ?? 0,
                subscriptionsActiveNow: (try sums?.value("through") ?? 0) + (try endingLater?.value("n") ?? 0))
        }
    }

    public func findCustomers(matching query: String, limit: Int, bundleID: String?) async throws -> [CustomerMatch] {
        guard limit > 0 else { return [] }
        return try await read { db in
            var found = CustomerSearch.Found(bundleID: bundleID)
            if query.isEmpty {
                try Self.newestCustomers(limit: limit, into: &found, db)
            } else {
                for row in try db.rows(
                    """
                    SELECT bundle_id, app_user_id FROM transactions WHERE transaction_id = ? AND app_user_id IS NOT NULL
                    UNION
                    SELECT bundle_id, app_user_id FROM transactions
                    WHERE original_transaction_id = ? AND app_user_id IS NOT NULL
                    """, [query, query])
                {
                    found.add(.init(bundleID: try row.value("bundle_id"), appUserID: try row.value("app_user_id")))
                }
                // The range of lowercase IDs walks the index by prefix; LIKE keeps its exact meaning
                // (SQLite's LIKE and lower() ignore the case of ASCII letters only).
                for row in try db.rows(
                    """
                    SELECT bundle_id, app_user_id FROM transactions
                    WHERE lower(app_user_id) >= lower(?) AND lower(app_user_id) < lower(?) || ?
                      AND app_user_id LIKE ? ESCAPE '\\' AND (? IS NULL OR bundle_id = ?)
                    GROUP BY lower(app_user_id), bundle_id, app_user_id
                    ORDER BY lower(app_user_id), bundle_id, app_user_id LIMIT ?
                    """,
                    [query, query, CustomerSearch.last, LedgerSQLDialect.likePrefix(query), bundleID, bundleID, limit])
                {
                    found.add(.init(bundleID: try row.value("bundle_id"), appUserID: try row.value("app_user_id")))
                }
            }
            let matches = try found.keys.map { key in
                let row = try db.row(
                    """
                    SELECT COUNT(*) AS n, MAX(purchase_date) AS last FROM transactions
                    WHERE bundle_id = ? AND app_user_id = ?
                    """, [key.bundleID, key.appUserID])
                return CustomerMatch(
                    bundleID: key.bundleID, appUserID: key.appUserID, transactionCount: try row?.value("n") ?? 0,
                    lastPurchaseDate: LedgerTime.date(try row?.value("last") ?? 0))
            }
            return CustomerSearch.ordered(matches, limit: limit)
        }
    }

    /// The owners of the newest purchases, newest first, walking the index by purchase date a page
    /// at a time (passing purchases without an owner) until `limit` customers are found (or
    /// ``CustomerSearch/scanLimit`` rows were read).
    private static func newestCustomers(limit: Int, into found: inout CustomerSearch.Found, _ db: Database) throws {
        var cursor: (date: Int64, id: String)?
        var read = 0
        while found.count < limit, read < CustomerSearch.scanLimit {
            let rows =
                if let cursor {
                    try db.rows(
                        """
                        SELECT bundle_id, app_user_id, purchase_date, transaction_id FROM transactions
                        WHERE (purchase_date, transaction_id) < (?, ?) AND app_user_id IS NOT NULL
                        ORDER BY purchase_date DESC, transaction_id DESC LIMIT ?
                        """, [cursor.date, cursor.id, CustomerSearch.page])
                } else {
                    try db.rows(
                        """
                        SELECT bundle_id, app_user_id, purchase_date, transaction_id FROM transactions
                        WHERE app_user_id IS NOT NULL
                        ORDER BY purchase_date DESC, transaction_id DESC LIMIT ?
                        """, [CustomerSearch.page])
                }
            for row in rows {
                guard let owner: String = try row.value("app_user_id") else { continue }
                found.add(.init(bundleID: try row.value("bundle_id"), appUserID: owner))
                if found.count == limit { return }
            }
            guard let last = rows.last, rows.count == CustomerSearch.page else { return }
            cursor = (try last.value("purchase_date"), try last.value("transaction_id"))
            read += rows.count
        }
    }
}

extension SQLiteLedger {
    /// Fills in the price and currency of rows recorded before the ledger kept them, from their
    /// stored JWS, and adds their revenue to `daily_figures`: a page of rows in the order of their
    /// IDs per write transaction, which also moves the pass's cursor, so a pass stopped half way
    /// goes on where it stopped and never counts a row twice. Done once; later calls return at once.
    func backfillPrices() async throws {
        while try await write({ db in try Self.backfillPrices(page: FigureStatements.priceBackfillPage, db) }) {}
    }

    /// One page of ``backfillPrices()``; whether there is more.
    static func backfillPrices(page: Int, _ db: Database) throws -> Bool {
        guard
            let pass = try db.row(
                "SELECT after_key, finished_at FROM ledger_backfills WHERE name = ?", [FigureStatements.priceBackfill]),
            try pass.value("finished_at", Int64?.self) == nil
        else { return false }
        let rows = try db.rows(
            """
            SELECT transaction_id, original_transaction_id, signed_transaction, \(FigureSource.columns)
            FROM transactions WHERE transaction_id > ? AND price IS NULL AND signed_transaction IS NOT NULL
            ORDER BY transaction_id LIMIT ?
            """, [try pass.value("after_key", String.self), page])
        var figures = FigureChanges()
        for row in rows {
            guard let signed = SignedPrice(jws: try row.value("signed_transaction")) else { continue }
            let before = try figureSource(row)
            var after = before
            (after.price, after.currency) = (signed.price, signed.currency)
            try db.run(
                "UPDATE transactions SET price = ?, currency = ? WHERE transaction_id = ?",
                [signed.price, signed.currency, try row.value("transaction_id", String.self)])
            try markForMetrics(bundleID: before.bundleID, try row.value("original_transaction_id"), db)
            figures.replace(before, with: after)
        }
        try add(figures, db)
        let more = rows.count == page
        try db.run(
            "UPDATE ledger_backfills SET after_key = ?, finished_at = ? WHERE name = ?",
            [
                try rows.last?.value("transaction_id", String.self) ?? pass.value("after_key", String.self),
                more ? nil : LedgerTime.milliseconds(Date()), FigureStatements.priceBackfill,
            ])
        return more
    }
}
