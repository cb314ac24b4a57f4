import AppStoreModels
import KakinWire
public import Foundation
import SQLKit

extension SQLLedgerStore {
    // MARK: Offer signatures

    /// Logs an offer signature by its nonce; a nonce logged before is refused
    /// (``LedgerStoreError/Code/invalidArgument``), so no two signatures share one.
    public func recordOfferSignature(_ record: OfferSignatureRecord) async throws {
        try await writing(for: record.appUserID) { db in
            let inserted = try await db.run(
                .insertOfferSignature, .text(record.nonce), .text(record.bundleID), .text(record.appUserID),
                .text(record.productID), .text(record.offerID), .text(record.kind.rawValue), .text(record.keyID),
                .integer(LedgerTime.milliseconds(record.createdAt)))
            guard !inserted.isEmpty else {
                throw LedgerStoreError(.invalidArgument, "an offer signature with nonce \(record.nonce) exists already")
            }
        }
    }

    /// The newest offer signatures, of one app when `bundleID` is given.
    public func offerSignatures(bundleID: String?, limit: Int) async throws -> [OfferSignatureRecord] {
        let rows = try await readingStatement { db in
            if let bundleID {
                return try await db.run(.recentOfferSignaturesOfApp, .text(bundleID), .integer(Int64(limit)))
            }
            return try await db.run(.recentOfferSignatures, .integer(Int64(limit)))
        }
        return try rows.map { row in
            OfferSignatureRecord(
                nonce: try row.decode(column: "nonce", as: String.self),
                bundleID: try row.decode(column: "bundle_id", as: String.self),
                appUserID: try row.decode(column: "app_user_id", as: String.self),
                productID: try row.decode(column: "product_id", as: String.self),
                offerID: try row.optional("offer_id", as: String.self),
                kind: OfferSigningRequest.Kind(rawValue: try row.decode(column: "kind", as: String.self))
                    ?? .promotional,
                keyID: try row.decode(column: "key_id", as: String.self), createdAt: try row.date("created_at"))
        }
    }

    // MARK: Calls owed to the App Store Server API

    /// Records a call owed to Apple, once per ``AppleRequestRecord/id``: returns `false` when it
    /// was recorded before.
    @discardableResult
    public func recordAppleRequest(_ request: AppleRequestRecord) async throws -> Bool {
        try await writing { db in try await Self.insert(request, on: db) }
    }

    /// Writes a call owed to Apple in the transaction open on `db`; `false` when its ID is known.
    static func insert(_ request: AppleRequestRecord, on db: any SQLDatabase) async throws -> Bool {
            !(try await db.run(
                .insertAppleRequest, .text(request.id), .text(request.kind.rawValue), .text(request.bundleID),
                .text(request.transactionID), .text(request.environment.rawValue), .text(request.detail),
                .integer(LedgerTime.milliseconds(request.requestedAt)), .text(request.state.rawValue),
                .integer(LedgerTime.milliseconds(request.nextAttemptAt)), .text(request.lastError),
                .integer(request.finishedAt.map(LedgerTime.milliseconds)))
            .isEmpty)
    }

    /// Takes up to `limit` pending calls due at `now`, leased until `leaseUntil` so that no other
    /// server takes them meanwhile; each taken call counts one more attempt.
    public func claimDueAppleRequests(now: Date, limit: Int, leaseUntil: Date) async throws -> [AppleRequestRecord] {
        let current = LedgerValue.integer(LedgerTime.milliseconds(now))
        let rows = try await writing { db in
            // The lease is checked again on the row itself: on PostgreSQL a server that waited for
            // another's claim of the same row sees the new lease and leaves the row alone.
            try await db.run(
                .claimAppleRequests, .integer(LedgerTime.milliseconds(leaseUntil)), current, current,
                .integer(Int64(limit)), current)
        }
        return try rows.map(Self.appleRequest)
    }

    /// Ends a claimed call: `sent`, `skipped` or `failed` (with `error`), or `pending` again at
    /// `retryAt` after a failure worth retrying.
    public func finishAppleRequest(
        _ id: String, state: AppleRequestRecord.State, sentBody: String?, error: String?, retryAt: Date?, at date: Date
    ) async throws {
        try await writing { db in
            _ = try await db.run(
                .finishAppleRequest, .text(state.rawValue), .text(sentBody), .text(error),
                .integer(retryAt.map(LedgerTime.milliseconds) ?? 0),
                .integer(state == .pending ? nil : LedgerTime.milliseconds(date)), .text(id))
        }
    }

    /// The newest calls owed to Apple, of one app when `bundleID` is given.
    public func appleRequests(bundleID: String?, limit: Int) async throws -> [AppleRequestRecord] {
        let rows = try await readingStatement { db in
            if let bundleID {
                return try await db.run(.recentAppleRequestsOfApp, .text(bundleID), .integer(Int64(limit)))
            }
            return try await db.run(.recentAppleRequests, .integer(Int64(limit)))
        }
        return try rows.map(Self.appleRequest)
    }

    static func appleRequest(_ row: any SQLRow) throws -> AppleRequestRecord {
        AppleRequestRecord(
            id: try row.decode(column: "id", as: String.self),
            kind: AppleRequestRecord.Kind(rawValue: try row.decode(column: "kind", as: String.self))
                ?? .consumptionInformation,
            bundleID: try row.decode(column: "bundle_id", as: String.self),
            transactionID: try row.decode(column: "transaction_id", as: String.self),
            environment: AppStoreEnvironment(rawValue: try row.decode(column: "environment", as: String.self)),
            detail: try row.optional("detail", as: String.self), requestedAt: try row.date("requested_at"),
            state: AppleRequestRecord.State(rawValue: try row.decode(column: "state", as: String.self)) ?? .failed,
            attempts: Int(try row.decode(column: "attempts", as: Int64.self)),
            nextAttemptAt: try row.date("next_attempt_at"), sentBody: try row.optional("sent_body", as: String.self),
            lastError: try row.optional("last_error", as: String.self), finishedAt: try row.optionalDate("finished_at"))
    }
}

extension LedgerStatement {
    static let insertOfferSignature = LedgerStatement(
        """
        INSERT INTO offer_signatures (nonce, bundle_id, app_user_id, product_id, offer_id, kind, key_id, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (nonce) DO NOTHING RETURNING nonce
        """)
    static let recentOfferSignatures = LedgerStatement(
        """
        SELECT nonce, bundle_id, app_user_id, product_id, offer_id, kind, key_id, created_at FROM offer_signatures
        ORDER BY created_at DESC, nonce LIMIT ?
        """)
    static let recentOfferSignaturesOfApp = LedgerStatement(
        """
        SELECT nonce, bundle_id, app_user_id, product_id, offer_id, kind, key_id, created_at FROM offer_signatures
        WHERE bundle_id = ? ORDER BY created_at DESC, nonce LIMIT ?
        """)
    static let insertAppleRequest = LedgerStatement(
        """
        INSERT INTO apple_requests
            (id, kind, bundle_id, transaction_id, environment, detail, requested_at, state, next_attempt_at, last_error,
             finished_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING id
        """)
    static let claimAppleRequests = LedgerStatement(
        """
        UPDATE apple_requests SET leased_until = ?, attempts = attempts + 1
        WHERE id IN (
            SELECT id FROM apple_requests
            WHERE state = 'pending' AND next_attempt_at <= ? AND leased_until <= ?
            ORDER BY next_attempt_at LIMIT ?)
          AND state = 'pending' AND leased_until <= ?
        RETURNING \(appleRequestColumns)
        """)
    static let finishAppleRequest = LedgerStatement(
        """
        UPDATE apple_requests SET state = ?, sent_body = ?, last_error = ?, next_attempt_at = ?, finished_at = ?,
            leased_until = 0
        WHERE id = ?
        """)
    static let recentAppleRequests = LedgerStatement(
        "SELECT \(appleRequestColumns) FROM apple_requests ORDER BY requested_at DESC, id LIMIT ?")
    static let recentAppleRequestsOfApp = LedgerStatement(
        """
        SELECT \(appleRequestColumns) FROM apple_requests
        WHERE bundle_id = ? ORDER BY requested_at DESC, id LIMIT ?
        """)
    private static let appleRequestColumns = """
        id, kind, bundle_id, transaction_id, environment, detail, requested_at, state, attempts, next_attempt_at,
        sent_body, last_error, finished_at
        """
}
