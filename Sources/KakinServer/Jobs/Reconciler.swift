public import AppStoreModels
import AppStoreSecurity
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

/// Heals what the server missed (a lost notification, an app that never uploaded), following
/// Apple's events rather than walking the ledger. For each of the app's environments it reads
/// Apple's notification history from where the last run stopped (less ``notificationOverlap``;
/// 180 days back the first time), a page at a time, and handles each notification as if Apple had
/// just sent it (one already handled changes nothing); a purchase a notification names whose first
/// transaction the ledger lacks has its transaction history asked for. Then it asks for the status
/// of the subscriptions whose period ended in that time with nothing recorded since (no renewal, no
/// expiry), and records what Apple says. Its work grows with Apple's events, not with the ledger,
/// and it holds a page at a time. Idempotent: running it twice changes nothing the second time.
///
/// Walking every purchase's history is left to ``importPurchases(bundleID:originalTransactionIDs:done:)``,
/// for an existing app's customers.
public struct Reconciler: Sendable {
    /// How far before the last run's end a run starts reading the notification history again, so
    /// that a notification Apple recorded late is not missed.
    public static let notificationOverlap: TimeInterval = 3600
    /// How far back Apple keeps the notification history.
    public static let notificationHistoryDays = 180

    /// What one run did.
    public typealias Report = ReconciliationCounts

    /// The service whose ledger is reconciled and through which transactions are recorded.
    public let service: PurchaseService
    /// Where the runs and the checkpoints in Apple's notification history are kept.
    public let runs: any LedgerOperations
    /// API access by bundle ID, over what the apps' configurations say.
    public let access: [String: ServerAPIAccess]
    /// Carries the requests to the App Store Server API.
    public let exchange: any HTTPExchange

    /// Creates a reconciler over `service`, keeping its runs and checkpoints in `runs`.
    public init(
        service: PurchaseService, runs: any LedgerOperations, access: [String: ServerAPIAccess] = [:],
        exchange: any HTTPExchange = URLSessionExchange()
    ) {
        self.service = service
        self.runs = runs
        self.access = access
        self.exchange = exchange
    }

    /// Creates a reconciler over `service`, keeping its runs and checkpoints in the service's ledger
    /// (``PurchaseService/upkeep``).
    public init(
        service: PurchaseService, access: [String: ServerAPIAccess] = [:],
        exchange: any HTTPExchange = URLSessionExchange()
    ) {
        self.init(service: service, runs: service.upkeep, access: access, exchange: exchange)
    }

    /// A run by its ID, as it stands.
    public func run(id: Int64) async throws -> ReconciliationRun? {
        try await runs.reconciliationRun(id: id)
    }

    /// How long a run may go without bringing its counts up to date before the next run of its
    /// app takes it for one whose server stopped.
    public static let abandonedAfter: TimeInterval = 15 * 60
    /// How many subscriptions whose period ended are read from the ledger at a time.
    static let lapsedPage = 500

    /// Reconciles one app now, and records the run (what it did, or why it stopped) in the ledger;
    /// throws what stopped it. With `since`, the run reads Apple's notification history from that
    /// instant (less ``notificationOverlap``) when it is earlier than the checkpoint: the heal after
    /// a ledger was restored from a backup taken then.
    /// A run of the app going on (started by this server or another) is not doubled: `conflict`.
    public func reconcile(bundleID: String, since: Date? = nil) async throws -> Report {
        let (run, isNew) = try await start(bundleID: bundleID)
        guard isNew else {
            throw ServerError(.conflict, "reconciliation run \(run.id) of \(bundleID) is going on")
        }
        return try await perform(run, since: since)
    }

    /// Records that a run of `bundleID` starts now, for ``carryOut(_:)`` to do, unless a run of the
    /// app goes on: then that run, with `isNew` false. Throws when the app cannot be reconciled
    /// (unknown, or no App Store Server API key).
    public func start(bundleID: String) async throws -> (run: ReconciliationRun, isNew: Bool) {
        _ = try configuration(of: bundleID)
        return try await runs.startReconciliation(
            bundleID: bundleID, at: service.now(), abandonedAfter: Self.abandonedAfter)
    }

    /// Does a run that ``start(bundleID:)`` recorded, and returns it as it ended (`completed`, or
    /// `failed` with why).
    public func carryOut(_ run: ReconciliationRun) async -> ReconciliationRun {
        // What stopped it is recorded with the run.
        _ = try? await perform(run)
        return (try? await runs.reconciliationRun(id: run.id)) ?? run
    }

    /// The app and a client of the App Store Server API with its key; throws when the app cannot
    /// be reconciled (unknown, or no key).
    private func configuration(of bundleID: String) throws -> (AppConfiguration, AppStoreServerAPIClient) {
        let app = try service.app(bundleID)
        guard let access = access[bundleID] ?? app.serverAPI else {
            throw ServerError(.notConfigured, "no App Store Server API key is configured for \(bundleID)")
        }
        return (app, AppStoreServerAPIClient(access: access, exchange: exchange, bundleID: bundleID, now: service.realNow))
    }

    /// Does a recorded run, recording its progress after each page and how it ended.
    private func perform(_ run: ReconciliationRun, since: Date? = nil) async throws -> Report {
        var record = run
        var report = Report()
        func save(_ state: ReconciliationRun.State, _ report: Report, failure: String? = nil) async throws {
            record.state = state
            record.updatedAt = max(service.now(), record.startedAt)
            record.finishedAt = state == .running ? nil : record.updatedAt
            record.failure = failure
            record.counts = report
            try await runs.updateReconciliation(record)
        }
        do {
            let (app, client) = try configuration(of: run.bundleID)
            for environment in [AppStoreEnvironment.production, .sandbox] where app.environments.contains(environment) {
                try await reconcile(
                    app: app, environment: environment, client: client, since: since, report: &report,
                    progress: { try await save(.running, $0) })
            }
        } catch {
            try? await save(.failed, report, failure: ServerError(error).message)
            throw error
        }
        try await save(.completed, report)
        return report
    }

    /// Reconciles one environment of an app: reads the notification history from the checkpoint
    /// or `since`, whichever is earlier (less the overlap), to now, then asks for the status of the subscriptions whose period ended
    /// in that time with nothing recorded since, and moves the checkpoint to now once all of it
    /// was done. `progress` is called after each page.
    private func reconcile(
        app: AppConfiguration, environment: AppStoreEnvironment, client: AppStoreServerAPIClient, since: Date?,
        report: inout Report, progress: (Report) async throws -> Void
    ) async throws {
        let end = service.now()
        let oldest = end.addingTimeInterval(-Double(Self.notificationHistoryDays) * 86_400 + 60)
        let checkpoint = try await runs.notificationCheckpoint(bundleID: app.bundleID, environment: environment)
        // Without a checkpoint the run reads all Apple keeps, as a first run does.
        let from = checkpoint.map { min($0, since ?? $0) }
        let start = max(oldest, from?.addingTimeInterval(-Self.notificationOverlap) ?? oldest)
        var covered: Set<String> = []
        try await readNotificationHistory(
            app: app, environment: environment, from: start, to: end, client: client, covered: &covered,
            report: &report, progress: progress)
        try await checkLapsedSubscriptions(
            app: app, environment: environment, from: start, to: end, client: client, covered: &covered,
            report: &report, progress: progress)
        try await runs.advanceNotificationCheckpoint(
            bundleID: app.bundleID, environment: environment, to: end, at: service.now())
    }

    /// Reads the notification history of `environment` from `start` to `end`, a page at a time,
    /// handling each notification as if Apple had just sent it; a purchase a notification names
    /// whose first transaction the ledger lacks has its history asked for.
    private func readNotificationHistory(
        app: AppConfiguration, environment: AppStoreEnvironment, from start: Date, to end: Date,
        client: AppStoreServerAPIClient, covered: inout Set<String>, report: inout Report, progress: (Report) async throws -> Void
    ) async throws {
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
                    continue
                }
                // The notification was verified as it was handled: its purchase is read from it as is.
                guard let named = Self.namedPurchase(signed), !covered.contains(named.originalTransactionID),
                    try await service.transaction(id: named.originalTransactionID) == nil
                else { continue }
                try await walkHistory(
                    of: PurchaseInHistory(
                        originalTransactionID: named.originalTransactionID, transactionID: named.transactionID,
                        environment: environment),
                    app: app, client: client, covered: &covered, report: &report)
            }
            try await progress(report)
            token = page.hasMore == true ? page.paginationToken : nil
        } while token != nil
    }

    /// The purchase a notification's transaction belongs to, and the transaction.
    private static func namedPurchase(_ signedPayload: String) -> (originalTransactionID: String, transactionID: String)? {
        guard let payload = try? CompactJWS(signedPayload).decodePayload(as: ResponseBodyV2DecodedPayload.self),
            let signedTransaction = payload.data?.signedTransactionInfo,
            let transaction = try? CompactJWS(signedTransaction).decodePayload(as: JWSTransactionDecodedPayload.self),
            let transactionID = transaction.transactionID
        else { return nil }
        return (transaction.originalTransactionID ?? transactionID, transactionID)
    }

    /// Asks for the status of each subscription whose period ended between `start` and `end` with
    /// nothing recorded since (no later transaction, no renewal state signed after its end), a
    /// ledger page at a time, and records what Apple says: the latest transaction and the renewal state.
    private func checkLapsedSubscriptions(
        app: AppConfiguration, environment: AppStoreEnvironment, from start: Date, to end: Date,
        client: AppStoreServerAPIClient, covered: inout Set<String>, report: inout Report, progress: (Report) async throws -> Void
    ) async throws {
        var cursor: LapsedSubscription?
        while true {
            let lapsed = try await service.lapsedSubscriptions(
                bundleID: app.bundleID, environment: environment, endedFrom: start, before: end, after: cursor,
                limit: Self.lapsedPage)
            guard let last = lapsed.last else { return }
            cursor = last
            for subscription in lapsed where !covered.contains(subscription.originalTransactionID) {
                report.subscriptionsChecked += 1
                guard
                    let statuses = try await client.get(
                        StatusResponse.self, .getAllSubscriptionStatuses,
                        path: "inApps/v1/subscriptions/\(subscription.transactionID)", environment: environment,
                        missingIsNil: true)
                else { continue }
                for item in (statuses.data ?? []).flatMap({ $0.lastTransactions ?? [] })
                where item.originalTransactionID == subscription.originalTransactionID {
                    try await record(status: item, app: app, client: client, covered: &covered, report: &report)
                }
                covered.insert(subscription.originalTransactionID)
            }
            try await progress(report)
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
        let (app, client) = try configuration(of: bundleID)
        var report = Report()
        var covered: Set<String> = []
        var count = 0
        for id in originalTransactionIDs {
            if !covered.contains(id) {
                for environment in [AppStoreEnvironment.production, .sandbox] where app.environments.contains(environment) {
                    let seen = report.transactionsSeen
                    try await walkHistory(
                        of: PurchaseInHistory(originalTransactionID: id, transactionID: id, environment: environment),
                        app: app, client: client, covered: &covered, report: &report)
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
        of purchase: PurchaseInHistory, app: AppConfiguration, client: AppStoreServerAPIClient, covered: inout Set<String>,
        report: inout Report
    ) async throws {
        report.historiesRead += 1
        var revision: String?
        repeat {
            let page = try await history(
                of: purchase.transactionID, revision: revision, client: client,
                environment: purchase.environment)
            for signed in page.signedTransactions ?? [] {
                if let recorded = try await ingest(
                    signed, app: app, context: "history of \(purchase.transactionID)", report: &report)
                {
                    covered.insert(recorded.originalTransactionID)
                }
            }
            revision = page.hasMore == true ? page.revision : nil
        } while revision != nil
        covered.insert(purchase.originalTransactionID)
    }

    /// Records what Apple reports of a subscription's status: its latest transaction and its
    /// renewal state. A latest transaction the ledger lacked means renewals were missed: the
    /// purchase's history is asked for, to bring in those before it.
    private func record(
        status item: LastTransactionsItem, app: AppConfiguration, client: AppStoreServerAPIClient, covered: inout Set<String>,
        report: inout Report
    ) async throws {
        if let signed = item.signedTransactionInfo,
            let latest = try await ingest(
                signed, app: app, context: "status of \(item.originalTransactionID ?? "a subscription")",
                report: &report),
            latest.isNew, !covered.contains(latest.originalTransactionID)
        {
            try await walkHistory(
                of: PurchaseInHistory(
                    originalTransactionID: latest.originalTransactionID, transactionID: latest.transactionID,
                    environment: latest.environment),
                app: app, client: client, covered: &covered, report: &report)
        }
        guard let signed = item.signedRenewalInfo else { return }
        let (_, decoded) = try PurchaseService.decode(signed, as: JWSRenewalInfoDecodedPayload.self)
        guard let environment = decoded.environment, app.environments.contains(environment) else { return }
        let verifier = try service.verifier(app, environment)
        let info: JWSRenewalInfoDecodedPayload
        do { info = try await verifier.verifyRenewalInfo(signed) } catch {
            throw ServerError(verification: error, context: "renewal info of \(item.originalTransactionID ?? "")")
        }
        if let renewal = SubscriptionRenewal(
            bundleID: app.bundleID, status: item.status, renewalInfo: info, receivedAt: service.now())
        {
            try await service.recordRenewal(renewal)
        }
    }

    /// Verifies a signed transaction Apple returned and records (or revokes) it; what was recorded
    /// and whether it is new, or `nil` for a transaction of an environment the app does not accept.
    private func ingest(
        _ signed: String, app: AppConfiguration, context: String, report: inout Report
    ) async throws -> (originalTransactionID: String, transactionID: String, environment: AppStoreEnvironment, isNew: Bool)? {
        let (compact, decoded) = try PurchaseService.decode(signed, as: JWSTransactionDecodedPayload.self)
        guard let environment = decoded.environment, app.environments.contains(environment) else { return nil }
        let verifier = try service.verifier(app, environment)
        let payload: JWSTransactionDecodedPayload
        do {
            payload = try await verifier.verify(
                compact, decoded: decoded, checking: [.bundleID, .environment])
        } catch {
            throw ServerError(verification: error, context: context)
        }
        report.transactionsSeen += 1
        let record = try PurchaseService.record(
            from: payload, jws: signed, appUserID: nil, source: .reconciliation, at: service.now())
        let outcome = try await service.ingest(record, app: app)
        if outcome.isNew { report.transactionsRecorded += 1 }
        if record.revocationDate != nil, outcome.revoked || outcome.isNew { report.transactionsRevoked += 1 }
        return (record.originalTransactionID, record.transactionID, environment, outcome.isNew)
    }

    private func history(
        of transactionID: String, revision: String?, client: AppStoreServerAPIClient, environment: AppStoreEnvironment
    ) async throws -> HistoryResponse {
        try await client.get(
            HistoryResponse.self, .getTransactionHistory, path: "inApps/v2/history/\(transactionID)",
            query: revision.map { [URLQueryItem(name: "revision", value: $0)] } ?? [], environment: environment,
            missingIsNil: true) ?? HistoryResponse(hasMore: false)
    }
}

/// A purchase whose history is asked for: one of its transactions, in the environment that
/// signed it.
private struct PurchaseInHistory {
    var originalTransactionID: String
    var transactionID: String
    var environment: AppStoreEnvironment
}
