public import AppStoreModels
public import AppStoreSecurity
import Crypto
public import Foundation
public import KakinLedger

/// How the server reaches the App Store Server API for one app: the hosts and the in-app
/// purchase key made in App Store Connect (Users and Access → Integrations → In-App Purchase).
public struct ServerAPIAccess: Sendable {
    /// The API for production data: `https://api.storekit.apple.com` (``AppleEndpoints/serverAPIProduction``), or the sandbox App Store.
    public var productionURL: URL
    /// The API for sandbox data: `https://api.storekit-sandbox.apple.com` (``AppleEndpoints/serverAPISandbox``), or the sandbox App Store.
    public var sandboxURL: URL
    /// The key's ID, shown next to it in App Store Connect.
    public var keyID: String
    /// The issuer ID of the team's keys.
    public var issuerID: String
    /// The key itself (the `.p8` file).
    public var privateKey: P256.Signing.PrivateKey
    /// How many requests to one endpoint the server sends at once for the app; the others wait
    /// their turn. Apple limits each endpoint's requests per app (`ServerAPIEndpoint` in AppStoreModels).
    public var concurrentRequestsPerEndpoint: Int { turns.limit }
    /// The turns at each endpoint, shared by every copy of this access.
    let turns: EndpointTurns

    /// Creates access to the API with one host for each environment.
    public init(
        productionURL: URL = AppleEndpoints.serverAPIProduction, sandboxURL: URL = AppleEndpoints.serverAPISandbox,
        keyID: String, issuerID: String, privateKey: P256.Signing.PrivateKey, concurrentRequestsPerEndpoint: Int = 4
    ) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.keyID = keyID
        self.issuerID = issuerID
        self.privateKey = privateKey
        turns = EndpointTurns(limit: concurrentRequestsPerEndpoint)
    }

    /// One host for both environments (the sandbox App Store serves both).
    public init(
        baseURL: URL, keyID: String, issuerID: String, privateKey: P256.Signing.PrivateKey,
        concurrentRequestsPerEndpoint: Int = 4
    ) {
        self.init(
            productionURL: baseURL, sandboxURL: baseURL, keyID: keyID, issuerID: issuerID, privateKey: privateKey,
            concurrentRequestsPerEndpoint: concurrentRequestsPerEndpoint)
    }

    /// The host for data of `environment`.
    public func baseURL(for environment: AppStoreEnvironment) -> URL {
        environment == .production ? productionURL : sandboxURL
    }
}

/// Heals what the server missed (a lost notification, an app that never uploaded). First it reads
/// Apple's notification history of each of the app's environments from where the last run stopped
/// (less ``notificationOverlap``; 180 days back the first time), a page at a time, and handles each
/// notification as if Apple had just sent it (one already handled changes nothing); then it asks
/// for the transaction history of every purchase the ledger knows, verifies each signed
/// transaction, and records or revokes it. Idempotent: running it twice changes nothing the
/// second time.
public struct Reconciler: Sendable {
    /// How far before the last run's end a run starts reading the notification history again, so
    /// that a notification Apple recorded late is not missed.
    public static let notificationOverlap: TimeInterval = 3600
    /// How far back Apple keeps the notification history.
    public static let notificationHistoryDays = 180

    /// What one run did.
    public struct Report: Codable, Hashable, Sendable {
        /// Notifications read from Apple's notification history.
        public var notificationsRead: Int = 0
        /// Of those, the ones the server had not handled before.
        public var notificationsNew: Int = 0
        /// Purchases whose history was asked for: one per original transaction the ledger knows.
        public var customersExamined: Int = 0
        /// Signed transactions Apple returned that verified.
        public var transactionsSeen: Int = 0
        /// Transactions the ledger did not have before.
        public var transactionsRecorded: Int = 0
        /// Transactions found refunded or revoked that the ledger had not yet revoked.
        public var transactionsRevoked: Int = 0

        /// A report of a run that did nothing yet.
        public init() {}
    }

    /// The service whose ledger is reconciled and through which transactions are recorded.
    public let service: PurchaseService
    /// API access by bundle ID, over what the apps' configurations say.
    public let access: [String: ServerAPIAccess]
    /// Carries the requests to the App Store Server API.
    public let exchange: any HTTPExchange

    /// Creates a reconciler over `service`.
    public init(
        service: PurchaseService, access: [String: ServerAPIAccess] = [:],
        exchange: any HTTPExchange = URLSessionExchange()
    ) {
        self.service = service
        self.access = access
        self.exchange = exchange
    }

    /// Reconciles one app, and records the run (what it did, or why it stopped) in the ledger.
    public func reconcile(bundleID: String) async throws -> Report {
        let app = try service.app(bundleID)
        guard let access = access[bundleID] ?? app.serverAPI else {
            throw ServerError(.notConfigured, "no App Store Server API key is configured for \(bundleID)")
        }
        let startedAt = service.now()
        var report = Report()
        func record(failure: String?) async throws {
            try await service.store.recordReconciliation(
                ReconciliationRun(
                    bundleID: bundleID, startedAt: startedAt, finishedAt: max(service.now(), startedAt),
                    transactionsSeen: report.transactionsSeen, transactionsRecorded: report.transactionsRecorded,
                    transactionsRevoked: report.transactionsRevoked, failure: failure))
        }
        do {
            try await run(app: app, access: access, report: &report)
        } catch {
            try? await record(failure: ServerError(error).message)
            throw error
        }
        try await record(failure: nil)
        return report
    }

    private func run(app: AppConfiguration, access: ServerAPIAccess, report: inout Report) async throws {
        for environment in [AppStoreEnvironment.production, .sandbox] where app.environments.contains(environment) {
            try await readNotificationHistory(app: app, environment: environment, access: access, report: &report)
        }
        try await walkHistories(app: app, access: access, report: &report)
    }

    /// Reads the notification history of `environment` from the checkpoint (less the overlap) to
    /// now, a page at a time, and moves the checkpoint to now once every page was handled.
    private func readNotificationHistory(
        app: AppConfiguration, environment: AppStoreEnvironment, access: ServerAPIAccess, report: inout Report
    ) async throws {
        let end = service.now()
        let oldest = end.addingTimeInterval(-Double(Self.notificationHistoryDays) * 86_400 + 60)
        let start = max(
            oldest,
            try await service.store.notificationCheckpoint(bundleID: app.bundleID, environment: environment)?
                .addingTimeInterval(-Self.notificationOverlap) ?? oldest)
        let client = AppStoreServerAPIClient(access: access, exchange: exchange, bundleID: app.bundleID, now: service.now)
        var token: String?
        repeat {
            let page = try await client.post(
                NotificationHistoryRequest(startDate: start, endDate: end), as: NotificationHistoryResponse.self,
                .getNotificationHistory, path: "inApps/v1/notifications/history",
                query: token.map { [URLQueryItem(name: "paginationToken", value: $0)] } ?? [],
                environment: environment)
            for item in page.notificationHistory ?? [] {
                guard let signed = item.signedPayload else { continue }
                report.notificationsRead += 1
                do {
                    if case .processed = try await service.receiveNotification(ResponseBodyV2(signedPayload: signed)) {
                        report.notificationsNew += 1
                    }
                } catch let error as ServerError where !error.isRetryable {
                    // One the server can never accept would stop every run at the same page.
                    service.logger.warning(
                        "reconciliation left a notification it cannot accept",
                        metadata: ["bundle_id": "\(app.bundleID)", "error": "\(error.message)"])
                }
            }
            token = page.hasMore == true ? page.paginationToken : nil
        } while token != nil
        try await service.store.advanceNotificationCheckpoint(
            bundleID: app.bundleID, environment: environment, to: end, at: service.now())
    }

    /// Asks for the transaction history of every purchase the ledger knows, reading the purchases a
    /// page at a time; a purchase that an earlier history already listed is not asked for again.
    private func walkHistories(app: AppConfiguration, access: ServerAPIAccess, report: inout Report) async throws {
        let bundleID = app.bundleID
        var covered: Set<String> = []
        var cursor: String?
        while true {
            let purchases = try await service.store.purchases(bundleID: bundleID, after: cursor, limit: 500)
            guard let last = purchases.last else { return }
            cursor = last.originalTransactionID
            for purchase in purchases where !covered.contains(purchase.originalTransactionID) {
                try await walkHistory(of: purchase, app: app, access: access, covered: &covered, report: &report)
            }
        }
    }

    /// Imports the purchases of an app the ledger may not know, by their original transaction IDs
    /// (an existing app's customers, exported from the system before Kakin): asks for the history of
    /// each, in the app's production environment and then its sandbox environment until one knows
    /// it, and records what it lists, as reconciliation does. A purchase that an earlier history
    /// already listed is not asked for again. `done` is told after each ID, with how many are done.
    public func importPurchases(
        bundleID: String, originalTransactionIDs: some Sequence<String>,
        done: (Int, Report) async throws -> Void = { _, _ in }
    ) async throws -> Report {
        let app = try service.app(bundleID)
        guard let access = access[bundleID] ?? app.serverAPI else {
            throw ServerError(.notConfigured, "no App Store Server API key is configured for \(bundleID)")
        }
        var report = Report()
        var covered: Set<String> = []
        var count = 0
        for id in originalTransactionIDs {
            if !covered.contains(id) {
                for environment in [AppStoreEnvironment.production, .sandbox] where app.environments.contains(environment) {
                    let seen = report.transactionsSeen
                    try await walkHistory(
                        of: KnownPurchase(originalTransactionID: id, transactionID: id, environment: environment),
                        app: app, access: access, covered: &covered, report: &report)
                    if report.transactionsSeen > seen { break }
                }
            }
            count += 1
            try await done(count, report)
        }
        return report
    }

    /// Asks for the history of one purchase, and records what it lists.
    private func walkHistory(
        of purchase: KnownPurchase, app: AppConfiguration, access: ServerAPIAccess, covered: inout Set<String>,
        report: inout Report
    ) async throws {
        let bundleID = app.bundleID
        report.customersExamined += 1
        var revision: String?
        repeat {
            let page = try await history(
                of: purchase.transactionID, revision: revision, access: access,
                environment: purchase.environment, bundleID: bundleID)
            for signed in page.signedTransactions ?? [] {
                let (compact, decoded) = try PurchaseService.decode(signed, as: JWSTransactionDecodedPayload.self)
                guard let environment = decoded.environment, app.environments.contains(environment) else {
                    continue
                }
                let verifier = try service.verifier(app, environment)
                let payload: JWSTransactionDecodedPayload
                do {
                    payload = try await verifier.verify(
                        compact, decoded: decoded, checking: [.bundleID, .environment])
                } catch {
                    throw ServerError(verification: error, context: "history of \(purchase.transactionID)")
                }
                report.transactionsSeen += 1
                let record = try PurchaseService.record(
                    from: payload, jws: signed, appUserID: nil, source: .reconciliation, at: service.now())
                covered.insert(record.originalTransactionID)
                let outcome = try await service.ingest(record, app: app)
                if outcome.isNew { report.transactionsRecorded += 1 }
                if record.revocationDate != nil, outcome.revoked || outcome.isNew {
                    report.transactionsRevoked += 1
                }
            }
            revision = page.hasMore == true ? page.revision : nil
        } while revision != nil
        covered.insert(purchase.originalTransactionID)
    }

    private func history(
        of transactionID: String, revision: String?, access: ServerAPIAccess, environment: AppStoreEnvironment,
        bundleID: String
    ) async throws -> HistoryResponse {
        try await AppStoreServerAPIClient(access: access, exchange: exchange, bundleID: bundleID, now: service.now).get(
            HistoryResponse.self, .getTransactionHistory, path: "inApps/v2/history/\(transactionID)",
            query: revision.map { [URLQueryItem(name: "revision", value: $0)] } ?? [], environment: environment,
            missingIsNil: true) ?? HistoryResponse(hasMore: false)
    }
}
