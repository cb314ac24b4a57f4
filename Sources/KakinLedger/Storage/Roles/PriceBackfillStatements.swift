import AppStoreModels
import Foundation

extension FigureStatements {
    /// One page of the pass that fills in the price and currency of rows recorded before the
    /// ledger kept them, from their stored JWS, and adds their revenue to `daily_figures`: up to
    /// `page` rows in the order of their IDs, in one write that also moves the pass's cursor (its
    /// row locked), so a pass stopped half way goes on where it stopped and never counts a row
    /// twice. Its answer is whether there is more; each engine runs pages until there is none,
    /// once, while it opens the ledger.
    static func pricePage(_ page: Int = priceBackfillPage) -> LedgerTransaction<Bool> {
        .run([
            """
            SELECT \(unescaped: LedgerBackfillRow.selection()) FROM ledger_backfills
            WHERE name = \(priceBackfill) \(.forUpdate)
            """
        ]) { rows in
            guard let pass = try rows[0].first(LedgerBackfillRow.self), pass.finishedAt == nil else { return .done(false) }
            return .run([
                """
                SELECT \(unescaped: TransactionRow.selection()) FROM transactions
                WHERE transaction_id > \(pass.afterKey) AND price IS NULL AND signed_transaction IS NOT NULL
                ORDER BY transaction_id LIMIT \(page) \(.forUpdate)
                """
            ]) { rows in
                let rows = try rows[0].decode(TransactionRow.self)
                var changes = PurchaseChanges()
                var priced: [[LedgerValue]] = []
                var marked: [MetricsUpdate.UnitKey] = []
                for before in rows {
                    guard let signed = before.signedTransaction.flatMap(SignedPrice.init(jws:)),
                        let price = signed.price, let currency = signed.currency
                    else { continue }
                    var after = before
                    (after.price, after.currency) = (price, currency)
                    priced.append([.text(before.transactionID), .integer(price), .text(currency)])
                    changes.figures.replace(FigureSource(before), with: FigureSource(after))
                    if PurchaseMetricChanges.keptInWrite(productType: before.productType) {
                        changes.metrics.replace(before, with: after)
                    } else {
                        marked.append(
                            MetricsUpdate.UnitKey(
                                bundleID: before.bundleID, originalTransactionID: before.originalTransactionID))
                    }
                }
                var statements: [LedgerSQL] = []
                if !priced.isEmpty {
                    statements.append(
                        """
                        WITH p(id, price, currency) AS (VALUES \(rows: priced))
                        UPDATE transactions SET price = p.price, currency = p.currency
                        FROM p WHERE transactions.transaction_id = p.id
                        """)
                }
                statements += MetricStatements.mark(marked)
                let more = rows.count == page
                statements.append(
                    """
                    UPDATE ledger_backfills SET after_key = \(rows.last?.transactionID ?? pass.afterKey),
                        finished_at = \(more ? nil : Date())
                    WHERE name = \(priceBackfill)
                    """)
                let apply = MetricStatements.apply(changes).then { _ in .done(more) }
                return .run(statements) { _ in apply }
            }
        }
    }
}

extension MetricStatements {
    /// Marks purchases for the metrics job, each once, in key order (``markConflict``).
    static func mark(_ purchases: [MetricsUpdate.UnitKey]) -> [LedgerSQL] {
        Set(purchases).sorted().chunked(rowsPerStatement).map { keys in
            let rows = keys.map { MetricPendingRow($0).boundValues }
            return """
                INSERT INTO metric_pending (\(unescaped: MetricPendingRow.boundColumns)) \(values: rows)
                \(unescaped: markConflict)
                """
        }
    }
}

/// A row of `ledger_backfills`: a pass run once after migrating, page by page (the price pass), or
/// as steps of the metrics job (the metrics' settling pass), with the key it has read up to and
/// when it finished.
struct LedgerBackfillRow: LedgerRecord {
    static let table = "ledger_backfills"
    typealias Columns = CodingKeys

    var name: String
    /// The last key the pass has read; the empty string before its first page.
    var afterKey: String
    var finishedAt: Int64?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name
        case afterKey = "after_key"
        case finishedAt = "finished_at"
    }
}
