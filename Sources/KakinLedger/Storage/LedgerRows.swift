import AppStoreModels
import Foundation
import KakinWire
import SQLKit

/// Instants as the ledger stores them: whole milliseconds since 1970-01-01 UTC in a `BIGINT`.
enum LedgerTime {
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

extension SQLRow {
    /// The column's value, or `nil` when it is SQL `NULL`.
    func optional<T: Decodable>(_ column: String, as type: T.Type) throws -> T? {
        try decodeNil(column: column) ? nil : decode(column: column, as: T.self)
    }

    func date(_ column: String) throws -> Date {
        LedgerTime.date(try decode(column: column, as: Int64.self))
    }

    func optionalDate(_ column: String) throws -> Date? {
        try optional(column, as: Int64.self).map(LedgerTime.date)
    }
}

/// Reading the ledger's tables into the record types.
enum LedgerRows {
    /// The SHA-256 of a signed JWS's bytes, as `signed_digest` stores it.
    static func signedDigest(_ jws: String?) -> Data? {
        jws.map { SignedDigest($0).bytes }
    }

    /// The columns of `transactions`, in the order ``transaction(_:)`` reads them.
    static let transactionColumns = """
        transaction_id, original_transaction_id, bundle_id, app_user_id, product_id, product_type, quantity, \
        purchase_date, expires_date, revocation_date, revocation_reason, environment, app_account_token, \
        signed_transaction, source, recorded_at, period_type
        """

    /// The same columns without the signed JWS (a few kilobytes a row, stored on overflow pages),
    /// for answers that do not carry it.
    static let transactionColumnsWithoutJWS = transactionColumns.replacingOccurrences(
        of: "signed_transaction,", with: "NULL AS signed_transaction,")

    static func transactionColumns(withJWS: Bool) -> String {
        withJWS ? transactionColumns : transactionColumnsWithoutJWS
    }

    static func transaction(_ row: any SQLRow) throws -> RecordedTransaction {
        let sourceValue = try row.decode(column: "source", as: String.self)
        guard let source = TransactionSource(rawValue: sourceValue) else {
            throw LedgerStoreError(.inconsistentState, "unknown transaction source '\(sourceValue)'")
        }
        return RecordedTransaction(
            transactionID: try row.decode(column: "transaction_id", as: String.self),
            originalTransactionID: try row.decode(column: "original_transaction_id", as: String.self),
            bundleID: try row.decode(column: "bundle_id", as: String.self),
            appUserID: try row.optional("app_user_id", as: String.self),
            productID: try row.decode(column: "product_id", as: String.self),
            productType: ProductType(rawValue: try row.decode(column: "product_type", as: String.self)),
            quantity: try row.decode(column: "quantity", as: Int.self),
            purchaseDate: try row.date("purchase_date"),
            expiresDate: try row.optionalDate("expires_date"),
            revocationDate: try row.optionalDate("revocation_date"),
            revocationReason: try row.optional("revocation_reason", as: Int.self).map(RevocationReason.init(rawValue:)),
            environment: AppStoreEnvironment(rawValue: try row.decode(column: "environment", as: String.self)),
            appAccountToken: try row.optional("app_account_token", as: String.self),
            signedTransaction: try row.optional("signed_transaction", as: String.self),
            source: source,
            recordedAt: try row.date("recorded_at"),
            periodType: try row.optional("period_type", as: String.self).flatMap(Entitlement.PeriodType.init(rawValue:))
        )
    }

    /// The columns of `ledger_entries`, in the order ``ledgerEntry(_:)`` reads them.
    static let ledgerColumns = """
        kind, bundle_id, app_user_id, currency, amount, transaction_id, idempotency_key, shortfall, created_at
        """

    static func ledgerEntry(_ row: any SQLRow) throws -> LedgerEntry {
        let kindValue = try row.decode(column: "kind", as: String.self)
        guard let kind = LedgerEntry.Kind(rawValue: kindValue) else {
            throw LedgerStoreError(.inconsistentState, "unknown ledger entry kind '\(kindValue)'")
        }
        return LedgerEntry(
            kind: kind,
            bundleID: try row.decode(column: "bundle_id", as: String.self),
            appUserID: try row.decode(column: "app_user_id", as: String.self),
            currency: try row.decode(column: "currency", as: String.self),
            amount: try row.decode(column: "amount", as: Int64.self),
            transactionID: try row.optional("transaction_id", as: String.self),
            idempotencyKey: try row.decode(column: "idempotency_key", as: String.self),
            shortfall: try row.decode(column: "shortfall", as: Int64.self),
            createdAt: try row.date("created_at")
        )
    }

    static func event(_ row: any SQLRow) throws -> LedgerEvent {
        LedgerEvent(
            id: try row.decode(column: "id", as: Int64.self),
            type: try row.decode(column: "type", as: String.self),
            bundleID: try row.decode(column: "bundle_id", as: String.self),
            appUserID: try row.optional("app_user_id", as: String.self),
            payload: Data(try row.decode(column: "payload", as: String.self).utf8),
            createdAt: try row.date("created_at")
        )
    }
}
