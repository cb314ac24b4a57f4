import AppStoreModels
public import Foundation
import SQLKit

extension SQLLedgerStore {
    /// Stores a notification with `ON CONFLICT (notification_uuid) DO NOTHING`; `RETURNING` says
    /// whether this call inserted it. The statement commits before the call returns.
    public func recordNotification(
        uuid: String, type: String, subtype: String?, bundleID: String, transactionID: String?, signedPayload: String,
        receivedAt: Date
    ) async throws -> Bool {
        try await database.raw(
            """
            INSERT INTO notifications
                (notification_uuid, type, subtype, bundle_id, transaction_id, signed_payload, received_at)
            VALUES (\(bind: uuid), \(bind: type), \(bind: subtype), \(bind: bundleID), \(bind: transactionID), \
            \(bind: signedPayload), \(bind: LedgerTime.milliseconds(receivedAt)))
            ON CONFLICT (notification_uuid) DO NOTHING
            RETURNING notification_uuid
            """
        ).row() != nil
    }

    /// The customer's transactions (by purchase date), ledger lines (in the order written) and
    /// balances, read from one snapshot. `entitlements` is left empty for the caller to derive.
    public func customer(bundleID: String, appUserID: String) async throws -> CustomerState {
        try await reading { db in
            let transactions = try await db.raw(
                """
                SELECT \(unsafeRaw: LedgerRows.transactionColumns) FROM transactions
                WHERE bundle_id = \(bind: bundleID) AND app_user_id = \(bind: appUserID)
                ORDER BY purchase_date, recorded_at, transaction_id
                """
            ).rows().map(LedgerRows.transaction)
            let ledger = try await db.raw(
                """
                SELECT \(unsafeRaw: LedgerRows.ledgerColumns) FROM ledger_entries
                WHERE bundle_id = \(bind: bundleID) AND app_user_id = \(bind: appUserID)
                ORDER BY id
                """
            ).rows().map(LedgerRows.ledgerEntry)
            let balances = try await Self.balances(bundleID: bundleID, appUserID: appUserID, on: db)
            return CustomerState(
                bundleID: bundleID, appUserID: appUserID, entitlements: [], balances: balances,
                transactions: transactions, ledger: ledger)
        }
    }

    /// A transaction by ID, as first recorded (plus its owner and revocation when learned later).
    public func transaction(id: String) async throws -> RecordedTransaction? {
        try await database.raw(
            "SELECT \(unsafeRaw: LedgerRows.transactionColumns) FROM transactions WHERE transaction_id = \(bind: id)"
        ).row().map(LedgerRows.transaction)
    }

    /// Every transaction of an app, by purchase date, for reconciliation.
    public func transactions(bundleID: String) async throws -> [RecordedTransaction] {
        try await database.raw(
            """
            SELECT \(unsafeRaw: LedgerRows.transactionColumns) FROM transactions
            WHERE bundle_id = \(bind: bundleID)
            ORDER BY purchase_date, recorded_at, transaction_id
            """
        ).rows().map(LedgerRows.transaction)
    }
}

extension SQLLedgerStore {
    /// Answers when the database does: `SELECT 1`, for readiness checks.
    public func ping() async throws {
        _ = try await database.raw("SELECT 1 AS one").row()
    }
}

extension SQLLedgerStore {
    /// A customer's balances by currency.
    static func balances(bundleID: String, appUserID: String, on db: any SQLDatabase) async throws -> [String: Int64] {
        let rows = try await db.run(.balances, .text(bundleID), .text(appUserID))
        var balances: [String: Int64] = [:]
        for row in rows {
            balances[try row.decode(column: "currency", as: String.self)] = try row.decode(
                column: "amount", as: Int64.self)
        }
        return balances
    }
}

extension SQLLedgerStore {
    /// The transaction stored with exactly these signed bytes, found by their digest.
    public func signedTransaction(digest: SignedDigest) async throws -> KnownSignedTransaction? {
        if signedDigests?.mayContain(digest.bytes) == false { return nil }
        // On PostgreSQL read with the lookups other requests ask for at the same moment.
        if let postgres { return try await postgres.digestReads.read(digest.bytes) }
        guard
            let row = try await readingStatement({ db in try await db.first(.signedTransaction, .blob(digest.bytes)) })
        else { return nil }
        return try Self.knownSignedTransaction(row)
    }

    /// On PostgreSQL every lookup is a statement (batched with others); SQLite rules out most
    /// bytes it never stored in memory (the digests' first bytes).
    public var signedDigestLookupsAreRemote: Bool { postgres != nil }

    /// On PostgreSQL, the lookup and the owner's summary are read in one statement, with those
    /// other requests ask for at the same moment; on SQLite, the lookup alone.
    public func signedTransactionAndSummary(
        digest: SignedDigest
    ) async throws -> (known: KnownSignedTransaction, summary: CustomerSummary?)? {
        guard let postgres else { return try await signedTransaction(digest: digest).map { ($0, nil) } }
        return try await postgres.duplicateReads.read(digest.bytes).map { ($0.known, $0.summary) }
    }

    /// A row of ``LedgerStatement/signedTransaction`` (or of its batch).
    static func knownSignedTransaction(_ row: any SQLRow) throws -> KnownSignedTransaction {
        KnownSignedTransaction(
            transactionID: try row.decode(column: "transaction_id", as: String.self),
            bundleID: try row.decode(column: "bundle_id", as: String.self),
            environment: AppStoreEnvironment(rawValue: try row.decode(column: "environment", as: String.self)),
            appUserID: try row.optional("app_user_id", as: String.self))
    }
}
