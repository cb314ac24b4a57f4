public import AppStoreModels
public import AppStoreSecurity
import Crypto
public import Foundation

/// How the server reaches the App Store Server API for one app.
public struct ServerAPIAccess: Sendable {
    /// `https://api.storekit.apple.com`, `https://api.storekit-sandbox.apple.com`, or the sandbox App Store.
    public var baseURL: URL
    public var keyID: String
    public var issuerID: String
    public var privateKey: P256.Signing.PrivateKey

    public init(baseURL: URL, keyID: String, issuerID: String, privateKey: P256.Signing.PrivateKey) {
        self.baseURL = baseURL
        self.keyID = keyID
        self.issuerID = issuerID
        self.privateKey = privateKey
    }
}

/// Heals what the server missed (a lost notification, an app that never uploaded): asks the App
/// Store Server API for the transaction history of every purchase the ledger knows, verifies
/// each signed transaction, and records or revokes it. Idempotent: running it twice changes
/// nothing the second time.
public struct Reconciler: Sendable {
    /// What one run did.
    public struct Report: Codable, Hashable, Sendable {
        public var customersExamined: Int = 0
        public var transactionsSeen: Int = 0
        public var transactionsRecorded: Int = 0
        public var transactionsRevoked: Int = 0
    }

    public let service: PurchaseService
    public let access: [String: ServerAPIAccess]
    public let exchange: any HTTPExchange

    public init(
        service: PurchaseService, access: [String: ServerAPIAccess], exchange: any HTTPExchange = URLSessionExchange()
    ) {
        self.service = service
        self.access = access
        self.exchange = exchange
    }

    /// Reconciles one app.
    public func reconcile(bundleID: String) async throws -> Report {
        let app = try service.app(bundleID)
        guard let access = access[bundleID] else {
            throw ServerError(.invalidConfiguration, "no App Store Server API access is configured for \(bundleID)")
        }
        var report = Report()
        var covered: Set<String> = []
        let known = try await service.store.transactions(bundleID: bundleID)
        for transaction in known where !covered.contains(transaction.originalTransactionID) {
            report.customersExamined += 1
            var revision: String?
            repeat {
                let page = try await history(
                    of: transaction.transactionID, revision: revision, access: access, bundleID: bundleID)
                for signed in page.signedTransactions ?? [] {
                    let environment = try PurchaseService.claimedEnvironment(signed)
                    guard let verifier = app.verifier(for: environment, now: service.now) else { continue }
                    let payload: JWSTransactionDecodedPayload
                    do { payload = try verifier.verifyTransaction(signed) } catch {
                        throw ServerError(.verificationFailed, "history of \(transaction.transactionID): \(error)")
                    }
                    report.transactionsSeen += 1
                    let record = try PurchaseService.record(
                        from: payload, jws: signed, appUserID: nil, source: .reconciliation, at: service.now())
                    covered.insert(record.originalTransactionID)
                    let grants = service.grants.grants(for: record.productID)
                    var recordedNow = false
                    if case .recorded = try await service.store.record(record, grants: grants) {
                        report.transactionsRecorded += 1
                        recordedNow = true
                    }
                    if let revoked = record.revocationDate {
                        let revokedNow = try await service.store.revoke(
                            transactionID: record.transactionID, at: revoked, reason: record.revocationReason?.rawValue,
                            grants: grants, policy: service.clawbackPolicy)
                        if revokedNow || recordedNow { report.transactionsRevoked += 1 }
                    }
                }
                revision = page.hasMore == true ? page.revision : nil
            } while revision != nil
            covered.insert(transaction.originalTransactionID)
        }
        return report
    }

    private func history(
        of transactionID: String, revision: String?, access: ServerAPIAccess, bundleID: String
    )
        async throws -> HistoryResponse
    {
        var components = URLComponents(
            url: access.baseURL.appendingPathComponent("inApps/v2/history/\(transactionID)"),
            resolvingAgainstBaseURL: false)
        if let revision { components?.queryItems = [URLQueryItem(name: "revision", value: revision)] }
        guard let url = components?.url else {
            throw ServerError(.invalidConfiguration, "bad App Store Server API URL")
        }
        let token = try AppStoreServerAPIToken.make(
            keyID: access.keyID, issuerID: access.issuerID, bundleID: bundleID, privateKey: access.privateKey)
        let (status, body): (Int, Data)
        do {
            (status, body) = try await exchange.send(
                method: "GET", url: url, headers: ["Authorization": "Bearer \(token)", "Accept": "application/json"],
                body: nil)
        } catch {
            throw ServerError(.appleUnavailable, "the App Store Server API did not answer: \(error)")
        }
        guard status == 200 else {
            let apiError = try? JSONDecoder().decode(APIErrorResponse.self, from: body)
            if status == 404 || apiError?.errorCode == .transactionIDNotFound { return HistoryResponse(hasMore: false) }
            throw ServerError(
                status == 429 || status >= 500 ? .appleUnavailable : .verificationFailed,
                "the App Store Server API answered \(status) \(apiError?.errorCode?.rawValue ?? 0): \(apiError?.errorMessage ?? "")"
            )
        }
        do { return try JSONDecoder().decode(HistoryResponse.self, from: body) } catch {
            throw ServerError(.appleUnavailable, "the App Store Server API answered an unreadable history")
        }
    }
}
