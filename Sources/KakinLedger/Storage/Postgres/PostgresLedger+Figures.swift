import AppStoreModels
public import Foundation
import PostgresNIO

/// The dashboard's bounded reads: the overview's figures and the customers page; and the pass
/// that fills in the prices of rows recorded before the ledger kept them.
extension PostgresLedger {
    public func dailyFigures(bundleID: String, days: Range<Int>, now: Date) async throws -> DailyFiguresPeriod {
        let moment = ms(now)
        let today = DailyFigures.floorDivide(moment, DailyFigures.dayLength)
        let tomorrow = (today + 1) * DailyFigures.dayLength
        let (first, end) = (Int32(days.lowerBound), Int32(days.upperBound))
        let environments = AppStoreEnvironment.knownValues.map(\.rawValue)
        return try await read { connection in
            try await connection.withTransaction(logger: Self.quiet) { connection in
                _ = try await connection.rows("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                let figures = try await connection.rows(
                    """
                    SELECT day, product_id, currency, environment, purchases, refunds, revenue, subscription_starts,
                        subscription_ends
                    FROM daily_figures WHERE bundle_id = \(bundleID) AND day >= \(first) AND day < \(end)
                    ORDER BY day, product_id, currency, environment
                    """
                ).map { row in
                    let (day, product, currency, environment, purchases, refunds, revenue, starts, ends) =
                        try row.decode((Int, String, String, String, Int, Int, Int64, Int, Int).self)
                    return DailyFigures(
                        day: day, productID: product, currency: currency.isEmpty ? nil : currency,
                        environment: AppStoreEnvironment(rawValue: environment), purchases: purchases,
                        refunds: refunds, revenue: revenue, subscriptionStarts: starts, subscriptionEnds: ends)
                }
                let sums = try await connection.rows(
                    """
                    SELECT COALESCE(SUM(CASE WHEN day < \(first) THEN subscription_starts - subscription_ends END), 0)::BIGINT,
                        COALESCE(SUM(CASE WHEN day <= \(today) THEN subscription_starts - subscription_ends END), 0)::BIGINT
                    FROM daily_figures WHERE bundle_id = \(bundleID) AND day <= \(max(Int64(first) - 1, today))
                    """
                ).first
                var (before, through): (Int64, Int64) = (0, 0)
                if let sums { (before, through) = try sums.decode((Int64, Int64).self) }
                let endingLater = try await connection.rows(
                    """
                    SELECT COUNT(*)::BIGINT FROM transactions
                    WHERE bundle_id = \(bundleID) AND environment = ANY(\(environments))
                      AND expires_date > \(moment) AND expires_date < \(tomorrow)
                      AND product_type = 'Auto-Renewable Subscription'
                      AND (revocation_date IS NULL OR revocation_date > \(moment)) AND purchase_date < \(moment)
                    """
                ).first?.decode(Int64.self) ?? 0
                return DailyFiguresPeriod(
                    figures: figures, subscriptionsActiveBefore: Int(before),
                    subscriptionsActiveNow: Int(through + endingLater))
            }
        }
    }

    public func findCustomers(matching query: String, limit: Int, bundleID: String?) async throws -> [CustomerMatch] {
        guard limit > 0 else { return [] }
        return try await read { connection in
            var found = CustomerSearch.Found(bundleID: bundleID)
            if query.isEmpty {
                try await Self.newestCustomers(limit: limit, into: &found, on: connection)
            } else {
                for row in try await connection.rows(
                    """
                    SELECT bundle_id, app_user_id FROM transactions
                    WHERE transaction_id = \(query) AND app_user_id IS NOT NULL
                    UNION
                    SELECT bundle_id, app_user_id FROM transactions
                    WHERE original_transaction_id = \(query) AND app_user_id IS NOT NULL
                    """)
                {
                    let (bundle, user) = try row.decode((String, String).self)
                    found.add(.init(bundleID: bundle, appUserID: user))
                }
                // The range of lowercase IDs, compared byte by byte, walks the index by prefix;
                // ILIKE keeps its exact meaning.
                for row in try await connection.rows(
                    """
                    SELECT bundle_id, app_user_id FROM transactions
                    WHERE lower(app_user_id) COLLATE "C" >= lower(\(query))
                      AND lower(app_user_id) COLLATE "C" < lower(\(query)) || \(CustomerSearch.last)
                      AND app_user_id ILIKE \(LedgerSQLDialect.likePrefix(query)) ESCAPE '\\'
                      AND (\(bundleID)::TEXT IS NULL OR bundle_id = \(bundleID))
                    GROUP BY lower(app_user_id) COLLATE "C", bundle_id, app_user_id
                    ORDER BY lower(app_user_id) COLLATE "C", bundle_id, app_user_id LIMIT \(Int64(limit))
                    """)
                {
                    let (bundle, user) = try row.decode((String, String).self)
                    found.add(.init(bundleID: bundle, appUserID: user))
                }
            }
            guard found.count > 0 else { return [] }
            let matches = try await connection.rows(
                """
                SELECT c.bundle_id, c.app_user_id, s.n, s.last
                FROM unnest(\(found.keys.map(\.bundleID))::TEXT[], \(found.keys.map(\.appUserID))::TEXT[])
                    AS c(bundle_id, app_user_id)
                CROSS JOIN LATERAL (
                    SELECT COUNT(*)::BIGINT AS n, MAX(purchase_date) AS last FROM transactions t
                    WHERE t.bundle_id = c.bundle_id AND t.app_user_id = c.app_user_id) s
                """
            ).map { row in
                let (bundle, user, count, last) = try row.decode((String, String, Int64, Int64?).self)
                return CustomerMatch(
                    bundleID: bundle, appUserID: user, transactionCount: Int(count), lastPurchaseDate: date(last ?? 0))
            }
            return CustomerSearch.ordered(matches, limit: limit)
        }
    }

    /// The owners of the newest purchases, newest first, walking the index by purchase date a page
    /// at a time (passing purchases without an owner) until `limit` customers are found (or
    /// ``CustomerSearch/scanLimit`` rows were read).
    private static func newestCustomers(
        limit: Int, into found: inout CustomerSearch.Found, on connection: PostgresConnection
    ) async throws {
        // Before the largest key there is.
        var cursor: (date: Int64, id: String) = (Int64.max, "")
        var first = true
        var read = 0
        while found.count < limit, read < CustomerSearch.scanLimit {
            let rows = try await connection.rows(
                """
                SELECT bundle_id, app_user_id, purchase_date, transaction_id FROM transactions
                WHERE (\(first) OR (purchase_date, transaction_id) < (\(cursor.date), \(cursor.id)))
                  AND app_user_id IS NOT NULL
                ORDER BY purchase_date DESC, transaction_id DESC LIMIT \(Int64(CustomerSearch.page))
                """
            ).map { try $0.decode((String, String?, Int64, String).self) }
            for (bundle, owner, _, _) in rows {
                guard let owner else { continue }
                found.add(.init(bundleID: bundle, appUserID: owner))
                if found.count == limit { return }
            }
            guard let last = rows.last, rows.count == CustomerSearch.page else { return }
            cursor = (last.2, last.3)
            first = false
            read += rows.count
        }
    }

    /// Fills in the price and currency of rows recorded before the ledger kept them, from their
    /// stored JWS, and adds their revenue to `daily_figures`: a page of rows in the order of their
    /// IDs per transaction, which also moves the pass's cursor (its row locked), so a pass stopped
    /// half way goes on where it stopped and never counts a row twice. Done once; later calls
    /// return at once.
    static func backfillPrices(on connection: PostgresConnection) async throws {
        let page = FigureStatements.priceBackfillPage
        while try await connection.withTransaction(logger: Self.quiet, { connection in
            guard
                let pass = try await connection.rows(
                    """
                    SELECT after_key, finished_at FROM ledger_backfills
                    WHERE name = \(FigureStatements.priceBackfill) FOR UPDATE
                    """
                ).first
            else { return false }
            let (after, finished) = try pass.decode((String, Int64?).self)
            guard finished == nil else { return false }
            let rows = try await connection.rows(
                """
                SELECT transaction_id, signed_transaction, \(unescaped: FigureSource.columns) FROM transactions
                WHERE transaction_id > \(after) AND price IS NULL AND signed_transaction IS NOT NULL
                ORDER BY transaction_id LIMIT \(Int64(page)) FOR UPDATE
                """)
            var figures = FigureChanges()
            var (ids, prices, currencies): ([String], [Int64], [String]) = ([], [], [])
            var last = after
            for row in rows {
                let random = row.makeRandomAccess()
                let id = try random["transaction_id"].decode(String.self)
                last = id
                guard let signed = SignedPrice(jws: try random["signed_transaction"].decode(String.self)),
                    let price = signed.price, let currency = signed.currency
                else { continue }
                let before = try figureSource(random)
                var after = before
                (after.price, after.currency) = (price, currency)
                figures.replace(before, with: after)
                ids.append(id)
                prices.append(price)
                currencies.append(currency)
            }
            if !ids.isEmpty {
                _ = try await connection.rows(
                    """
                    WITH priced AS (
                        UPDATE transactions SET price = p.price, currency = p.currency
                        FROM unnest(\(ids)::TEXT[], \(prices)::BIGINT[], \(currencies)::TEXT[]) AS p(id, price, currency)
                        WHERE transactions.transaction_id = p.id
                        RETURNING transactions.bundle_id, transactions.original_transaction_id)
                    INSERT INTO metric_pending (bundle_id, original_transaction_id)
                    SELECT DISTINCT bundle_id, original_transaction_id FROM priced
                    \(unescaped: MetricStatements.markConflict)
                    """)
            }
            try await add(figures, on: connection)
            let more = rows.count == page
            _ = try await connection.rows(
                """
                UPDATE ledger_backfills SET after_key = \(last), finished_at = \(more ? nil : ms(Date()))
                WHERE name = \(FigureStatements.priceBackfill)
                """)
            return more
        }) {}
    }

    /// A row with ``FigureSource/columns``, read by name.
    static func figureSource(_ row: PostgresRandomAccessRow) throws -> FigureSource {
        FigureSource(
            bundleID: try row["bundle_id"].decode(String.self), productID: try row["product_id"].decode(String.self),
            productType: try row["product_type"].decode(String.self),
            environment: try row["environment"].decode(String.self), quantity: try row["quantity"].decode(Int64.self),
            purchaseDate: try row["purchase_date"].decode(Int64.self),
            expiresDate: try row["expires_date"].decode(Int64?.self),
            revocationDate: try row["revocation_date"].decode(Int64?.self),
            price: try row["price"].decode(Int64?.self), currency: try row["currency"].decode(String?.self))
    }
}
