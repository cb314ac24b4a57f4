import AppStoreModels
import Foundation
import KakinCore

/// A row of `offer_signatures`: an offer signature made for a customer, by its nonce.
struct OfferSignatureRow: LedgerRecord {
    static let table = "offer_signatures"
    typealias Columns = CodingKeys

    var nonce: String
    var bundleID: String
    var appUserID: String
    var productID: String
    var offerID: String?
    var kind: String
    var keyID: String
    var createdAt: Int64

    enum CodingKeys: String, CodingKey, CaseIterable {
        case nonce
        case bundleID = "bundle_id"
        case appUserID = "app_user_id"
        case productID = "product_id"
        case offerID = "offer_id"
        case kind
        case keyID = "key_id"
        case createdAt = "created_at"
    }

    init(_ record: OfferSignatureRecord) {
        nonce = record.nonce
        bundleID = record.bundleID
        appUserID = record.appUserID
        productID = record.productID
        offerID = record.offerID
        kind = record.kind.rawValue
        keyID = record.keyID
        createdAt = LedgerTime.milliseconds(record.createdAt)
    }

    var record: OfferSignatureRecord {
        OfferSignatureRecord(
            nonce: nonce, bundleID: bundleID, appUserID: appUserID, productID: productID, offerID: offerID,
            kind: OfferSignatureKind(rawValue: kind) ?? .promotional, keyID: keyID,
            createdAt: LedgerTime.date(createdAt))
    }
}

/// A row of `apple_requests`: a call owed to the App Store Server API.
struct AppleRequestRow: LedgerRecord {
    static let table = "apple_requests"
    typealias Columns = CodingKeys

    var id: String
    var kind: String
    var bundleID: String
    var transactionID: String
    var environment: String
    var detail: String?
    var requestedAt: Int64
    var state: String
    var attempts: Int
    var nextAttemptAt: Int64
    /// Until when a server that claimed the call holds it (0: nobody).
    var leasedUntil: Int64
    /// Who holds the call until `leasedUntil`; they may take it back before then.
    var leasedBy: String
    var sentBody: String?
    var lastError: String?
    var finishedAt: Int64?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, kind
        case bundleID = "bundle_id"
        case transactionID = "transaction_id"
        case environment, detail
        case requestedAt = "requested_at"
        case state, attempts
        case nextAttemptAt = "next_attempt_at"
        case leasedUntil = "leased_until"
        case leasedBy = "leased_by"
        case sentBody = "sent_body"
        case lastError = "last_error"
        case finishedAt = "finished_at"
    }

    init(_ request: AppleRequestRecord) {
        id = request.id
        kind = request.kind.rawValue
        bundleID = request.bundleID
        transactionID = request.transactionID
        environment = request.environment.rawValue
        detail = request.detail
        requestedAt = LedgerTime.milliseconds(request.requestedAt)
        state = request.state.rawValue
        attempts = request.attempts
        nextAttemptAt = LedgerTime.milliseconds(request.nextAttemptAt)
        leasedUntil = 0
        leasedBy = ""
        sentBody = request.sentBody
        lastError = request.lastError
        finishedAt = request.finishedAt.map(LedgerTime.milliseconds)
    }

    var record: AppleRequestRecord {
        AppleRequestRecord(
            id: id, kind: AppleRequestRecord.Kind(rawValue: kind) ?? .consumptionInformation, bundleID: bundleID,
            transactionID: transactionID, environment: AppStoreEnvironment(rawValue: environment), detail: detail,
            requestedAt: LedgerTime.date(requestedAt), state: AppleRequestRecord.State(rawValue: state) ?? .failed,
            attempts: attempts, nextAttemptAt: LedgerTime.date(nextAttemptAt), sentBody: sentBody,
            lastError: lastError, finishedAt: finishedAt.map(LedgerTime.date))
    }

    /// Writes a call owed unless its ID is known; returns its ID when written.
    static func insert(_ request: AppleRequestRecord) throws -> LedgerSQL {
        try "INSERT INTO \(insert: AppleRequestRow(request)) ON CONFLICT (id) DO NOTHING RETURNING id"
    }
}

/// Offer signatures and calls owed to Apple, the same statements on both engines.
extension StatementEngine {
    public func recordOfferSignature(_ record: OfferSignatureRecord) async throws {
        let inserted = try await write(
            for: record.appUserID,
            "INSERT INTO \(insert: OfferSignatureRow(record)) ON CONFLICT (nonce) DO NOTHING RETURNING nonce")
        guard inserted > 0 else {
            throw LedgerStoreError(.invalidArgument, "an offer signature with nonce \(record.nonce) exists already")
        }
    }

    public func offerSignatures(bundleID: String?, limit: Int) async throws -> [OfferSignatureRecord] {
        try await read(
            """
            SELECT \(unescaped: OfferSignatureRow.selection()) FROM offer_signatures \(where: ["bundle_id": bundleID])
            ORDER BY created_at DESC, nonce LIMIT \(limit)
            """, as: OfferSignatureRow.self
        ).map(\.record)
    }

    @discardableResult
    public func recordAppleRequest(_ request: AppleRequestRecord) async throws -> Bool {
        try await write(AppleRequestRow.insert(request)) > 0
    }

    /// Takes up to `limit` pending calls due at `now` that no one else holds, leased to `holder`
    /// until `leaseUntil`, each counting one more attempt. On PostgreSQL, rows another server is
    /// claiming are passed over, and the lease is checked again on the row itself.
    public func claimDueAppleRequests(
        holder: String, now: Date, limit: Int, leaseUntil: Date
    ) async throws -> [AppleRequestRecord] {
        let free: LedgerSQL = "(leased_until <= \(now) OR leased_by = \(holder))"
        return try await write(
            """
            UPDATE apple_requests SET leased_until = \(leaseUntil), leased_by = \(holder), attempts = attempts + 1
            WHERE id IN (
                SELECT id FROM apple_requests
                WHERE state = 'pending' AND next_attempt_at <= \(now) AND \(free)
                ORDER BY next_attempt_at LIMIT \(limit) \(.skipLocked))
              AND state = 'pending' AND \(free)
            RETURNING \(unescaped: AppleRequestRow.selection())
            """, returning: AppleRequestRow.self
        ).map(\.record)
    }

    public func finishAppleRequest(
        _ id: String, state: AppleRequestRecord.State, sentBody: String?, error: String?, retryAt: Date?, at date: Date
    ) async throws {
        let finished: Date? = state == .pending ? nil : date
        let retry: Int64 = retryAt.map(LedgerTime.milliseconds) ?? 0
        try await write(
            """
            UPDATE apple_requests SET state = \(state.rawValue), sent_body = \(sentBody), last_error = \(error),
                next_attempt_at = \(retry), finished_at = \(finished), leased_until = 0, leased_by = ''
            WHERE id = \(id)
            """)
    }

    public func appleRequests(bundleID: String?, limit: Int) async throws -> [AppleRequestRecord] {
        try await read(
            """
            SELECT \(unescaped: AppleRequestRow.selection()) FROM apple_requests \(where: ["bundle_id": bundleID])
            ORDER BY requested_at DESC, id LIMIT \(limit)
            """, as: AppleRequestRow.self
        ).map(\.record)
    }
}
