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
