public import AppStoreModels
public import AppStoreSecurity
public import Foundation

/// The server's core: verify what arrives, record it once, grant once, and answer with the
/// customer's state. The HTTP layer is a thin shell around it.
public struct PurchaseService: Sendable {
    public let store: any LedgerStore
    public let apps: [String: AppConfiguration]
    public let grants: GrantsCatalog
    /// Product types by ID (from the `.storekit` catalog), for receipt-derived transactions.
    public let productTypes: [String: ProductType]
    public let clawbackPolicy: ClawbackPolicy
    public let verifyReceiptClient: any VerifyReceiptClient
    public let now: @Sendable () -> Date

    public init(
        store: any LedgerStore, apps: [AppConfiguration], grants: GrantsCatalog,
        productTypes: [String: ProductType] = [:],
        clawbackPolicy: ClawbackPolicy = .clampAtZero,
        verifyReceiptClient: any VerifyReceiptClient = URLSessionVerifyReceiptClient(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.apps = Dictionary(apps.map { ($0.bundleID, $0) }, uniquingKeysWith: { first, _ in first })
        self.grants = grants
        self.productTypes = productTypes
        self.clawbackPolicy = clawbackPolicy
        self.verifyReceiptClient = verifyReceiptClient
        self.now = now
    }

    /// The configuration of `bundleID`.
    public func app(_ bundleID: String) throws(ServerError) -> AppConfiguration {
        guard let app = apps[bundleID] else { throw ServerError(.unknownApp, "no app is configured for \(bundleID)") }
        return app
    }

    // MARK: - Signed transactions

    /// `POST /v1/transactions`: verifies a signed transaction, records it for `appUserID`, grants
    /// once, and returns the customer's state.
    public func submitTransaction(_ jws: String, bundleID: String, appUserID: String) async throws -> CustomerState {
        let app = try app(bundleID)
        let payload = try verifyTransaction(jws, app: app)
        let record = try Self.record(from: payload, jws: jws, appUserID: appUserID, source: .app, at: now())
        switch try await store.record(record, grants: grants.grants(for: record.productID)) {
        case .ownedByAnotherCustomer:
            throw ServerError(.conflict, "transaction \(record.transactionID) belongs to another customer")
        case .recorded, .duplicate:
            break
        }
        if record.revocationDate != nil {
            _ = try await store.revoke(
                transactionID: record.transactionID, at: record.revocationDate ?? now(),
                reason: record.revocationReason?.rawValue, grants: grants.grants(for: record.productID),
                policy: clawbackPolicy)
        }
        return try await customer(bundleID: bundleID, appUserID: appUserID)
    }

    /// The customer's state now, entitlements derived.
    public func customer(bundleID: String, appUserID: String) async throws -> CustomerState {
        _ = try app(bundleID)
        var state = try await store.customer(bundleID: bundleID, appUserID: appUserID)
        state.entitlements = EntitlementRules.entitlements(transactions: state.transactions, grants: grants, at: now())
        return state
    }

    /// Spends currency, once per idempotency key, never below zero.
    public func spend(
        bundleID: String, appUserID: String, currency: String, amount: Int64, idempotencyKey: String
    ) async throws -> SpendOutcome {
        _ = try app(bundleID)
        guard amount > 0 else { throw ServerError(.invalidRequest, "amount must be positive") }
        guard !idempotencyKey.isEmpty, idempotencyKey.count <= 200 else {
            throw ServerError(.invalidRequest, "an idempotency key of 1 to 200 characters is required")
        }
        return try await store.spend(
            bundleID: bundleID, appUserID: appUserID, currency: currency, amount: amount,
            idempotencyKey: idempotencyKey,
            at: now())
    }

    func verifyTransaction(_ jws: String, app: AppConfiguration) throws(ServerError) -> JWSTransactionDecodedPayload {
        let environment = try Self.claimedEnvironment(jws)
        guard let verifier = app.verifier(for: environment, now: now) else {
            throw ServerError(.verificationFailed, "\(app.bundleID) does not accept \(environment.rawValue) data")
        }
        do { return try verifier.verifyTransaction(jws) } catch {
            throw ServerError(.verificationFailed, "\(error)")
        }
    }

    /// The claims of a JWS read before verification, to choose the app and the verifier (as Apple's
    /// libraries decode before they verify); the verifier then checks them.
    static func unverifiedClaims(_ jws: String) throws(ServerError) -> SignedClaims {
        do { return try JSONDecoder().decode(SignedClaims.self, from: try CompactJWS(jws).payloadData()) } catch {
            throw ServerError(.verificationFailed, "malformedInput: not a compact JWS with a JSON payload")
        }
    }

    /// The environment a JWS claims (see ``unverifiedClaims(_:)``).
    static func claimedEnvironment(_ jws: String) throws(ServerError) -> AppStoreEnvironment {
        guard let environment = try unverifiedClaims(jws).signedPayloadEnvironment else {
            throw ServerError(.verificationFailed, "the payload names no environment")
        }
        return environment
    }

    static func record(
        from payload: JWSTransactionDecodedPayload, jws: String?, appUserID: String?, source: TransactionSource,
        at date: Date
    ) throws(ServerError) -> RecordedTransaction {
        guard let transactionID = payload.transactionID, let productID = payload.productID,
            let bundleID = payload.bundleID, let purchaseDate = payload.purchaseDate
        else {
            throw ServerError(
                .verificationFailed, "the transaction lacks transactionId, productId, bundleId or purchaseDate")
        }
        return RecordedTransaction(
            transactionID: transactionID, originalTransactionID: payload.originalTransactionID ?? transactionID,
            bundleID: bundleID, appUserID: appUserID, productID: productID, productType: payload.type ?? .nonConsumable,
            quantity: payload.quantity ?? 1, purchaseDate: purchaseDate, expiresDate: payload.expiresDate,
            revocationDate: payload.revocationDate, revocationReason: payload.revocationReason,
            environment: payload.environment ?? .sandbox, appAccountToken: payload.appAccountToken,
            signedTransaction: jws, source: source, recordedAt: date)
    }
}
