public import AppStoreModels
public import Foundation
import SQLKit

extension SQLLedgerStore {
    /// Records that the app download `appTransactionID` of `bundleID` belongs to `appUserID`; a
    /// later link of the same download to another customer replaces it.
    public func linkAppTransaction(
        bundleID: String, appTransactionID: String, appUserID: String, environment: AppStoreEnvironment, at date: Date
    ) async throws {
        try await writing(for: appUserID) { db in
            _ = try await db.run(
                .linkAppTransaction, .text(bundleID), .text(appTransactionID), .text(appUserID),
                .text(environment.rawValue), .integer(LedgerTime.milliseconds(date)))
        }
    }

    /// The app downloads linked to `appUserID` of `bundleID`, newest link first: each download's
    /// `appTransactionId` and when it was linked.
    public func appTransactions(
        bundleID: String, appUserID: String
    ) async throws -> [(appTransactionID: String, linkedAt: Date)] {
        let rows = try await readingStatement { db in
            try await db.run(.appTransactionsOfCustomer, .text(bundleID), .text(appUserID))
        }
        return try rows.map {
            (try $0.decode(column: "app_transaction_id", as: String.self), try $0.date("linked_at"))
        }
    }

    /// The customer the app download `appTransactionID` of `bundleID` was last linked to, if any.
    public func appTransactionCustomer(bundleID: String, appTransactionID: String) async throws -> String? {
        let row = try await readingStatement { db in
            try await db.run(.appTransactionCustomer, .text(bundleID), .text(appTransactionID)).first
        }
        return try row.map { try $0.decode(column: "app_user_id", as: String.self) }
    }
}

extension LedgerStatement {
    static let linkAppTransaction = LedgerStatement(
        """
        INSERT INTO app_transactions (bundle_id, app_transaction_id, app_user_id, environment, linked_at)
        VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (bundle_id, app_transaction_id) DO UPDATE SET
            app_user_id = excluded.app_user_id, environment = excluded.environment, linked_at = excluded.linked_at
        """)
    static let appTransactionsOfCustomer = LedgerStatement(
        """
        SELECT app_transaction_id, linked_at FROM app_transactions WHERE bundle_id = ? AND app_user_id = ?
        ORDER BY linked_at DESC, app_transaction_id LIMIT 50
        """)
    static let appTransactionCustomer = LedgerStatement(
        "SELECT app_user_id FROM app_transactions WHERE bundle_id = ? AND app_transaction_id = ?")
}
