import AppStoreModels
import Foundation
import GRDB

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
        let rows = try TransactionRow.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT \(TransactionRow.selection()) FROM transactions
                    WHERE transaction_id > ? AND price IS NULL AND signed_transaction IS NOT NULL
                    ORDER BY transaction_id LIMIT ?
                    """), arguments: [try pass.value("after_key", String.self), page])
        var figures = FigureChanges()
        var metrics = PurchaseMetricChanges()
        for before in rows {
            guard let signed = before.signedTransaction.flatMap(SignedPrice.init(jws:)) else { continue }
            var after = before
            (after.price, after.currency) = (signed.price, signed.currency)
            try db.run(
                "UPDATE transactions SET price = ?, currency = ? WHERE transaction_id = ?",
                [signed.price, signed.currency, before.transactionID])
            if PurchaseMetricChanges.keptInWrite(productType: before.productType) {
                metrics.replace(before, with: after)
            } else {
                try markForMetrics(bundleID: before.bundleID, before.originalTransactionID, db)
            }
            figures.replace(FigureSource(before), with: FigureSource(after))
        }
        try apply(PurchaseChanges(figures: figures, metrics: metrics), db)
        let more = rows.count == page
        try db.run(
            "UPDATE ledger_backfills SET after_key = ?, finished_at = ? WHERE name = ?",
            [
                try rows.last?.transactionID ?? pass.value("after_key", String.self),
                more ? nil : LedgerTime.milliseconds(Date()), FigureStatements.priceBackfill,
            ])
        return more
    }
}
