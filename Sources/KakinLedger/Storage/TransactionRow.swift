import AppStoreModels
import Foundation
import KakinCore

/// A row of `transactions`, as both engines write and read it.
///
/// Its coding keys are the table's columns, declared once: the statements that write or read
/// whole rows list their columns from ``columns``, in this order, and a test checks the list
/// against the table each migration builds. Adding a column means a migration, a property here
/// and the statements that use it.
struct TransactionRow: LedgerRecord, Hashable {
    static let table = "transactions"
    typealias Columns = CodingKeys

    var transactionID: String
    var originalTransactionID: String
    var bundleID: String
    var appUserID: String?
    var productID: String
    var productType: String
    var quantity: Int64
    var purchaseDate: Int64
    var expiresDate: Int64?
    var revocationDate: Int64?
    var revocationReason: Int64?
    var environment: String
    var appAccountToken: String?
    var signedTransaction: String?
    var source: String
    var recordedAt: Int64
    var periodType: String?
    var signedDigest: Data?
    /// The refunded share of a revoked transaction in milliunits of a percent; `NULL` on a revoked
    /// row is the whole transaction.
    var revocationPercentage: Int64?
    /// The price Apple signed, in milliunits of ``currency``; `NULL` when not known.
    var price: Int64?
    /// The currency of ``price`` (ISO 4217).
    var currency: String?
    /// The signed date of the latest refund reversal Apple reported for the transaction; `NULL`
    /// when none. Revocations dated no later are the ones it reversed.
    var revocationReversedAt: Int64?
    /// Where the customer paid (``PurchaseStore``'s raw value).
    var store: String
    /// The digest of the JWS's header when the row stores it apart (``storedApart(_:)``), in
    /// `signed_headers`: ``signedTransaction`` then holds the rest of the JWS. Always `nil` on a
    /// row read back, whose ``signedTransaction`` is the whole JWS again.
    var signedHeader: Data?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case transactionID = "transaction_id"
        case originalTransactionID = "original_transaction_id"
        case bundleID = "bundle_id"
        case appUserID = "app_user_id"
        case productID = "product_id"
        case productType = "product_type"
        case quantity
        case purchaseDate = "purchase_date"
        case expiresDate = "expires_date"
        case revocationDate = "revocation_date"
        case revocationReason = "revocation_reason"
        case environment
        case appAccountToken = "app_account_token"
        case signedTransaction = "signed_transaction"
        case source
        case recordedAt = "recorded_at"
        case periodType = "period_type"
        case signedDigest = "signed_digest"
        case revocationPercentage = "revocation_percentage"
        case price
        case currency
        case revocationReversedAt = "revocation_reversed_at"
        case store
        case signedHeader = "signed_header"
    }

    /// The columns as a `SELECT` lists them, the JWS whole (``jws(table:)``); without the JWS (a
    /// few kilobytes a row) it is read as `NULL`. `table` qualifies each column (`t.` for
    /// `t.transaction_id`). The lists most statements use are made once.
    static func selection(withJWS: Bool = true, table: String = "") -> String {
        switch (withJWS, table) {
        case (true, ""): selections.all
        case (false, ""): selections.withoutJWS
        case (true, "t."): selections.t
        default: listing(withJWS: withJWS, table: table)
        }
    }

    private static let selections = (
        all: listing(withJWS: true, table: ""), withoutJWS: listing(withJWS: false, table: ""),
        t: listing(withJWS: true, table: "t.")
    )

    private static func listing(withJWS: Bool, table: String) -> String {
        CodingKeys.allCases.map { column in
            switch column {
            case .signedTransaction: withJWS ? "\(jws(table: table)) AS signed_transaction" : "NULL AS signed_transaction"
            case .signedHeader: "NULL AS signed_header"
            default: table + column.rawValue
            }
        }.joined(separator: ", ")
    }

    /// The row's whole JWS as an expression: its header joined back from `signed_headers` when the
    /// row stores it apart. `table` qualifies the row's columns.
    static func jws(table: String = "") -> String {
        """
        CASE WHEN \(table)signed_header IS NULL THEN \(table)signed_transaction \
        ELSE (SELECT h.header FROM signed_headers h WHERE h.digest = \(table)signed_header) || '.' || \
        \(table)signed_transaction END
        """
    }

    /// The rows as they are written, and the headers they store apart, each once and in key
    /// order: a JWS's header (the signer's certificate chain, most of its bytes) is the same for
    /// every transaction signed with one key, so it is stored once in `signed_headers` and each
    /// row keeps the rest of its JWS and the header's digest (``signedHeader``). A value that is
    /// not a compact JWS is kept whole. A header equal to the one before it is not hashed again.
    static func storedApart(_ rows: [TransactionRow]) -> (rows: [TransactionRow], headers: [SignedHeaderRow]) {
        var headers: [Data: SignedHeaderRow] = [:]
        var last: SignedHeaderRow?
        let stored = rows.map { row in
            guard let jws = row.signedTransaction, let dot = headerEnd(jws) else { return row }
            let header = jws[..<dot]
            let kept = last.flatMap { $0.header == header ? $0 : nil } ?? SignedHeaderRow(header: String(header))
            last = kept
            headers[kept.digest] = kept
            var row = row
            row.signedTransaction = String(jws[jws.index(after: dot)...])
            row.signedHeader = kept.digest
            return row
        }
        return (stored, headers.values.sorted { $0.digest.lexicographicallyPrecedes($1.digest) })
    }

    /// Where a JWS's header ends: its first `.`, looked for in its bytes.
    private static func headerEnd(_ jws: String) -> String.Index? {
        var text = jws
        return text.withUTF8 { $0.firstIndex(of: UInt8(ascii: ".")) }.map { jws.utf8.index(jws.startIndex, offsetBy: $0) }
    }

    /// The row of a transaction recorded now for `owner`.
    init(_ transaction: RecordedTransaction, owner: String?, signedDigest: Data?) {
        transactionID = transaction.transactionID
        originalTransactionID = transaction.originalTransactionID
        bundleID = transaction.bundleID
        appUserID = owner
        productID = transaction.productID
        productType = transaction.productType.rawValue
        quantity = Int64(transaction.quantity)
        purchaseDate = LedgerTime.milliseconds(transaction.purchaseDate)
        expiresDate = transaction.expiresDate.map(LedgerTime.milliseconds)
        revocationDate = transaction.revocationDate.map(LedgerTime.milliseconds)
        revocationReason = transaction.revocationReason.map { Int64($0.rawValue) }
        environment = transaction.environment.rawValue
        appAccountToken = transaction.appAccountToken
        signedTransaction = transaction.signedTransaction
        source = transaction.source.rawValue
        recordedAt = LedgerTime.milliseconds(transaction.recordedAt)
        periodType = transaction.periodType?.rawValue
        self.signedDigest = signedDigest
        revocationPercentage = nil
        store = transaction.store.rawValue
        // A price without its currency (or the reverse) says nothing.
        if let price = transaction.price, let currency = transaction.currency {
            self.price = price
            self.currency = currency
        }
    }

    /// The transaction the row records.
    func transaction() throws -> RecordedTransaction {
        guard let source = TransactionSource(rawValue: source) else {
            throw LedgerStoreError(.inconsistentState, "unknown transaction source '\(source)'")
        }
        guard let store = PurchaseStore(rawValue: store) else {
            throw LedgerStoreError(.inconsistentState, "unknown store '\(store)'")
        }
        return RecordedTransaction(
            transactionID: transactionID, originalTransactionID: originalTransactionID, bundleID: bundleID,
            appUserID: appUserID, productID: productID, productType: ProductType(rawValue: productType),
            quantity: Int(quantity), purchaseDate: LedgerTime.date(purchaseDate),
            expiresDate: expiresDate.map(LedgerTime.date), revocationDate: revocationDate.map(LedgerTime.date),
            revocationReason: revocationReason.map { RevocationReason(rawValue: Int($0)) },
            environment: AppStoreEnvironment(rawValue: environment), appAccountToken: appAccountToken,
            signedTransaction: signedTransaction, source: source, recordedAt: LedgerTime.date(recordedAt),
            periodType: periodType.flatMap(SubscriptionPeriodType.init(rawValue:)), price: price, currency: currency,
            store: store)
    }
}

/// A row of `signed_headers`: a JWS header stored once for the transactions whose JWS it begins
/// (``TransactionRow/storedApart(_:)``), by the SHA-256 of its text.
struct SignedHeaderRow: LedgerRecord {
    static let table = "signed_headers"
    typealias Columns = CodingKeys

    var digest: Data
    var header: String

    /// The row of `header`, keyed by the SHA-256 of its text.
    init(header: String) {
        digest = SignedDigest(header).bytes
        self.header = header
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case digest
        case header
    }
}
