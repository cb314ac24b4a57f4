import Foundation

extension SQLiteLedger {
    /// Fills in the price and currency of rows recorded before the ledger kept them
    /// (``FigureStatements/pricePage(_:)``), a page per write. Done once; later calls return at once.
    func backfillPrices() async throws {
        while try await perform(for: nil, FigureStatements.pricePage()) {}
    }
}
