import Foundation
import PostgresNIO

/// The metrics on PostgreSQL: the statements are ``MetricStatements``', run by the customer's
/// writer (a write's changes) or in a transaction of their own (a step of the job).
extension PostgresLedger {
    /// One step of the job in one transaction, which holds a transaction-level advisory lock:
    /// servers sharing the database take turns, so that a customer's figures are worked out
    /// from every change committed before. A step still running four connection waits after it
    /// started (a database gone away mid-step) fails, its connection closed.
    public func updateMetrics(limit: Int) async throws -> Int {
        do {
            return try await lease(limit: connectionWait * 4) { connection in
                try await connection.withTransaction(logger: Self.quiet) { connection in
                    _ = try await connection.rows(
                        "SELECT pg_advisory_xact_lock(\(unescaped: Lock.scope), \(Lock.metrics.rawValue))")
                    return try await Self.perform(MetricStatements.step(limit: limit, settled: true), on: connection)
                }
            }
        } catch { throw Self.ledgerError(error) }
    }

    /// Applies what a write (a group's ingests, on PostgreSQL) changed in the metrics of purchases
    /// kept in the write and in the daily figures, once, at its end (``MetricStatements/apply(_:)``).
    static func apply(_ changes: PurchaseChanges, on connection: PostgresConnection) async throws {
        try await perform(MetricStatements.apply(changes), on: connection)
    }

    /// Brings a ledger whose job worked out every kind of purchase to the state where purchases
    /// other than subscriptions are kept in their writes (see the SQLite engine's). Run while
    /// migrating, holding the migrations' lock, so no replica writes meanwhile.
    static func settlePurchaseMetrics(on connection: PostgresConnection) async throws {
        guard try await perform(MetricStatements.unsettled, on: connection) else { return }
        let step = MetricStatements.step(limit: 500, settled: false, onlyKeptInWrite: true)
        while try await connection.withTransaction(logger: quiet, { connection in
            try await perform(step, on: connection)
        }) > 0 {}
        try await connection.withTransaction(logger: quiet) { connection in
            try await perform(MetricStatements.settled(at: Date()), on: connection)
        }
    }
}
