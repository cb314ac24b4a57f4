public import Foundation
import KakinWire
import SQLKit

extension SQLLedgerStore {
    /// Moves one purchase (every transaction of the app with `originalTransactionID`) from one
    /// customer to another, in one database transaction, with a `transaction.transferred` event
    /// (`originalTransactionId`, `from`, `to`, `transactionIds`).
    ///
    /// Only rows still owned by `from` move (`UPDATE … WHERE app_user_id = from`), so two
    /// concurrent transfers of the same purchase move it once. Currency already credited stays in
    /// the ledger of whoever it was credited to: a transfer moves access, not balances.
    public func transfer(
        bundleID: String, originalTransactionID: String, from: String, to: String, at date: Date
    ) async throws -> Int {
        guard from != to else { return 0 }
        let now = LedgerTime.milliseconds(date)
        return try await writing { db in
            try await Self.transfer(
                bundleID: bundleID, originalTransactionID: originalTransactionID, from: from, to: to, at: now, on: db)
        }
    }

    /// ``transfer(bundleID:originalTransactionID:from:to:at:)`` in the transaction open on `db`;
    /// `now` in the ledger's milliseconds.
    static func transfer(
        bundleID: String, originalTransactionID: String, from: String, to: String, at now: Int64,
        on db: any SQLDatabase
    ) async throws -> Int {
        guard from != to else { return 0 }
        let moved = try await db.raw(
            """
            UPDATE transactions SET app_user_id = \(bind: to)
            WHERE bundle_id = \(bind: bundleID) AND original_transaction_id = \(bind: originalTransactionID)
              AND app_user_id = \(bind: from)
            RETURNING transaction_id
            """
        ).all().map { try $0.decode(column: "transaction_id", as: String.self) }
        guard !moved.isEmpty else { return 0 }
        try await appendEvent(
            LedgerEventType.transactionTransferred, bundleID: bundleID, appUserID: to,
            payload: TransferEventPayload(
                originalTransactionId: originalTransactionID, from: from, to: to, transactionIds: moved.sorted()),
            at: now, on: db)
        return moved.count
    }
}

