public import Foundation

/// The balances: currency spent atomically, never below zero, once per idempotency key. (Credits
/// and clawbacks are written by the purchases' ingest.)
///
/// One role of ``LedgerStore``.
public protocol BalanceLedger: Sendable {
    /// Spends currency atomically: never below zero, once per idempotency key.
    func spend(
        bundleID: String, appUserID: String, currency: String, amount: Int64, idempotencyKey: String, at date: Date
    ) async throws -> SpendOutcome
}
