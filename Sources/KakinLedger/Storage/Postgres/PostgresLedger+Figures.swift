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
                SELECT \(unescaped: TransactionRow.selection()) FROM transactions
                WHERE transaction_id > \(after) AND price IS NULL AND signed_transaction IS NOT NULL
                ORDER BY transaction_id LIMIT \(Int64(page)) FOR UPDATE
                """
            ).map(transactionRow)
            var figures = FigureChanges()
            var metrics = PurchaseMetricChanges()
            var (ids, prices, currencies): ([String], [Int64], [String]) = ([], [], [])
            var last = after
            for before in rows {
                let id = before.transactionID
                last = id
                guard let signed = before.signedTransaction.flatMap(SignedPrice.init(jws:)),
                    let price = signed.price, let currency = signed.currency
                else { continue }
                var after = before
                (after.price, after.currency) = (price, currency)
                figures.replace(FigureSource(before), with: FigureSource(after))
                if PurchaseMetricChanges.keptInWrite(productType: before.productType) { metrics.replace(before, with: after) }
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
                        RETURNING transactions.bundle_id, transactions.original_transaction_id,
                            transactions.product_type)
                    INSERT INTO metric_pending (bundle_id, original_transaction_id)
                    SELECT DISTINCT bundle_id, original_transaction_id FROM priced
                    WHERE product_type = \(ProductType.autoRenewableSubscription.rawValue)
                    \(unescaped: MetricStatements.markConflict)
                    """)
            }
            try await apply(PurchaseChanges(figures: figures, metrics: metrics), on: connection)
            let more = rows.count == page
            _ = try await connection.rows(
                """
                UPDATE ledger_backfills SET after_key = \(last), finished_at = \(more ? nil : ms(Date()))
                WHERE name = \(FigureStatements.priceBackfill)
                """)
            return more
        }) {}
    }
}
