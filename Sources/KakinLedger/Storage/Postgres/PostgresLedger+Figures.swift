import AppStoreModels
import Foundation
import PostgresNIO

/// The dashboard's bounded reads: the overview's figures and the customers page; and the pass
/// that fills in the prices of rows recorded before the ledger kept them.
extension PostgresLedger {
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
