import Foundation
import GRDB

/// The metrics on SQLite: the statements are ``MetricStatements``', run in SQLite's one writer.
extension SQLiteLedger {
    public func updateMetrics(limit: Int) async throws -> Int {
        try await perform(for: nil, MetricStatements.step(limit: limit, settled: true))
    }

    /// Applies what a write changed in the metrics of purchases kept in the write and in the
    /// daily figures (``MetricStatements/apply(_:)``), in the write open on `db`.
    static func apply(_ changes: PurchaseChanges, _ db: Database) throws {
        try perform(MetricStatements.apply(changes), db)
    }

    /// Brings a ledger whose job worked out every kind of purchase to the state where purchases
    /// other than subscriptions are kept in their writes: the purchases of those kinds still marked
    /// are worked out as before, then their `metric_units` rows (each now what the rollups hold of
    /// it) are dropped. Done once, after migrating, before the first write; later calls return at once.
    func settlePurchaseMetrics() async throws {
        guard try await writer.read({ db in try Self.perform(MetricStatements.unsettled, db) }) else { return }
        // Part of migrating: written as the migrations are, not through the group commit.
        let step = MetricStatements.step(limit: 500, settled: false, onlyKeptInWrite: true)
        while try await writer.write({ db in try Self.perform(step, db) }) > 0 {}
        try await writer.write { db in try Self.perform(MetricStatements.settled(at: Date()), db) }
    }
}
