public import AppStoreModels
public import AppStoreSecurity
public import Crypto
public import Foundation
import KakinCore
public import KakinLedger
public import Hummingbird
public import Logging
import ServiceLifecycle
import X509

/// What ``buildApplication(configuration:dependencies:)`` takes from outside the configuration
/// file: the clock, the network, the logger and the metrics. The defaults are the real ones.
public struct ServerDependencies: Sendable {
    /// Calls verifyReceipt.
    public var verifyReceiptClient: any VerifyReceiptClient = URLSessionVerifyReceiptClient()
    /// Calls the App Store Server API and webhook endpoints.
    public var exchange: any HTTPExchange = URLSessionExchange()
    /// The clock of the ledger: what "now" is for entitlements, grace periods, trial conversion,
    /// cohorts and the dashboard (`kakin serve` gives the embedded sandbox's clock).
    public var now: @Sendable () -> Date = { Date() }
    /// The clock of what other parties check against real time: certificate chains and their
    /// revocation answers, the App Store Server API's bearer tokens, customer tokens, and webhook
    /// signatures and retries. `nil` takes ``now``.
    public var realNow: (@Sendable () -> Date)? = nil
    /// Carries the OCSP requests of the revocation checks.
    public var ocspTransport: any OCSPTransport = URLSessionOCSPTransport.cancellable
    /// The root logger; requests log at `info`, jobs at `warning`.
    public var logger = Logger(label: "kakin.server")
    /// The metrics served at `/metrics`.
    public var metrics = ServerMetrics()
    /// Called with the bound port once the server listens (port 0 picks a free one).
    public var onServerRunning: @Sendable (Int) async -> Void = { _ in }
    /// Called with the bound port once the listener of `/metrics` alone listens, when the
    /// configuration gives it one (``OperationsConfiguration/metricsListen``).
    public var onMetricsServerRunning: @Sendable (Int) async -> Void = { _ in }
    /// A monotonic clock in seconds, for the rate limits' buckets; `nil` takes the system's.
    public var uptime: (@Sendable () -> Double)? = nil
    /// Routes of other modules, added once the server's own (the dashboard adds its pages so).
    public var additionalRoutes: [@Sendable (Router<KakinRequestContext>, ServerComponents) throws -> Void] = []

    /// The real dependencies: the network through `URLSession`, the system clock, no extra routes.
    public init() {}
}

/// Builds the purchase server from its configuration: opens the ledger, reads every key, root,
/// catalog and grants file (a missing or bad one stops the start with one line naming its key),
/// builds each app's verifiers once, and returns an application whose services run the webhook
/// delivery and reconciliation jobs; migrations run before the server accepts a request.
///
/// Run it with `runService()` (SIGTERM and SIGINT drain the requests in flight, then the jobs
/// stop, then the ledger closes), or as one service of a larger `ServiceGroup`.
public func buildApplication(
    configuration: ServerConfiguration, dependencies: ServerDependencies = ServerDependencies()
) async throws -> some ApplicationProtocol {
    let logger = {
        var logger = dependencies.logger
        logger.logLevel = Logger.Level(rawValue: configuration.logLevel) ?? .info
        return logger
    }()
    var dependencies = dependencies
    dependencies.logger = logger
    let parts = try await ServerParts.make(configuration, dependencies)
    let store = parts.store
    for app in parts.service.apps.values.sorted(by: { $0.bundleID < $1.bundleID }) {
        for warning in app.securityWarnings { logger.warning("\(warning)", metadata: ["bundle_id": "\(app.bundleID)"]) }
    }
    let throttle = SignInThrottle(
        ledger: store, policy: configuration.signInThrottle, metrics: dependencies.metrics, logger: logger,
        now: dependencies.now)
    let http = KakinServerHTTP(
        service: parts.service, signingKey: parts.serverKey, reconciliations: parts.reconciliations,
        maxBodySize: configuration.maxBodyBytes, maxContentSize: configuration.maxContentBytes,
        metrics: dependencies.metrics, logger: logger, signInThrottle: throttle, rateLimits: configuration.rateLimits,
        operations: configuration.operations, uptime: dependencies.uptime)
    if configuration.operations.metricsOpenToAnyone {
        logger.warning(
            """
            /metrics answers anyone who can reach port \(configuration.listen.port): set operations.metricsToken \
            or operations.metricsListen to keep its sign-in and ledger figures to your monitoring
            """)
    }

    // Services stop in the reverse order: runs started on demand end before the ledger closes.
    var services: [any Service] = [LedgerStoreService(store: store), parts.reconciliations]
    let dispatcher = parts.webhooks
    let metrics = dependencies.metrics
    if !configuration.webhooks.isEmpty {
        services.append(
            PeriodicJob(
                name: "webhooks", every: .seconds(configuration.webhookIntervalSeconds), waitsFirst: true,
                logger: logger
            ) {
                try await dispatcher.deliverDue { lag in metrics.webhookDelivered(after: lag) }
                metrics.webhookBacklog(try await dispatcher.backlog())
            })
    }
    // Servers sharing a database take turns: each step holds the ledger's metrics lock.
    let metricsService = parts.service
    services.append(
        PeriodicJob(
            name: "subscription metrics", every: .seconds(configuration.metricsIntervalSeconds), waitsFirst: true,
            logger: logger
        ) {
            try await metricsService.updateMetrics { done in
                metrics.metricsCaughtUp(false)
                metrics.metricsUpdated(done)
            }
            if !Task.isShuttingDownGracefully { metrics.metricsCaughtUp(true) }
        })
    // Stripe's events that no webhook brought are recorded from its list of events, then every
    // event still to apply is applied; recording or applying an event twice changes nothing, so
    // servers sharing a database need not take turns.
    let stripeApps = parts.service.apps.values.filter { $0.stripe != nil }.map(\.bundleID).sorted()
    if configuration.reconcileIntervalSeconds > 0, !stripeApps.isEmpty {
        let service = parts.service
        services.append(
            PeriodicJob(
                name: "stripe events", every: .seconds(configuration.reconcileIntervalSeconds), waitsFirst: true,
                logger: logger
            ) {
                for bundleID in stripeApps {
                    _ = try await service.reconcileStripeEvents(bundleID: bundleID)
                    await service.applyStripeEventsNow(bundleID: bundleID)
                }
            })
    }
    let reconciled = parts.service.apps.values.filter { $0.serverAPI != nil }.map(\.bundleID).sorted()
    if configuration.reconcileIntervalSeconds > 0, !reconciled.isEmpty {
        let reconciler = parts.reconciler
        services.append(
            PeriodicJob(
                name: "reconciliation", every: .seconds(configuration.reconcileIntervalSeconds), waitsFirst: true,
                logger: logger
            ) {
                // Servers sharing a PostgreSQL database take turns: one reconciles, the others skip.
                let ran: Void? = try await store.exclusively(.reconciliation) {
                    for bundleID in reconciled {
                        let report: Reconciler.Report
                        do { report = try await reconciler.reconcile(bundleID: bundleID) } catch let error
                            as ServerError where error.code == .conflict
                        {
                            // A run asked for on demand goes on: it does this one's work.
                            logger.debug("reconciliation skipped", metadata: ["reason": "\(error.message)"])
                            continue
                        }
                        logger.info(
                            "reconciled",
                            metadata: [
                                "bundle_id": "\(bundleID)", "seen": "\(report.transactionsSeen)",
                                "recorded": "\(report.transactionsRecorded)",
                                "revoked": "\(report.transactionsRevoked)",
                            ])
                    }
                }
                if ran == nil { logger.debug("reconciliation skipped: another server is reconciling") }
            })
    }
    if parts.service.apps.values.contains(where: { $0.serverAPI != nil }) {
        let sender = AppleRequestSender(service: parts.service, calls: store)
        services.append(
            PeriodicJob(
                name: "calls to the App Store Server API", every: .seconds(configuration.appleRequestIntervalSeconds),
                waitsFirst: true, logger: logger
            ) { try await sender.sendDue() })
    }
    let onServerRunning = dependencies.onServerRunning
    let router = http.router()
    let components = ServerComponents(
        configuration: configuration, service: parts.service, reconciliations: parts.reconciliations,
        signInThrottle: throttle,
        serverKey: parts.serverKey, now: dependencies.now, logger: logger)
    for add in dependencies.additionalRoutes { try add(router, components) }
    if let listen = configuration.operations.metricsListen {
        // A second listener for /metrics alone; it stops right after the main listener.
        let onMetricsServerRunning = dependencies.onMetricsServerRunning
        services.append(
            Application(
                router: http.metricsRouter(),
                server: .http1(configuration: .init(idleTimeout: .seconds(Int64(configuration.idleTimeoutSeconds)))),
                configuration: .init(address: .hostname(listen.host, port: listen.port), serverName: "kakin"),
                onServerRunning: { channel in await onMetricsServerRunning(channel.localAddress?.port ?? 0) },
                logger: logger))
    }
    let limiter = ConnectionLimiter(maxConnections: configuration.maxConnections)
    dependencies.metrics.observe(limiter)
    var application = Application(
        router: router,
        server: .http1(
            configuration: .init(
                additionalChannelHandlers: [limiter.handler()],
                idleTimeout: .seconds(Int64(configuration.idleTimeoutSeconds)))),
        configuration: .init(
            address: .hostname(configuration.listen.host, port: configuration.listen.port), serverName: "kakin"),
        services: services,
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
        logger: logger)
    application.beforeServerStarts { try await store.migrate() }
    return application
}

/// What a server is made of, handed to the routes other modules add to it
/// (``ServerDependencies/additionalRoutes``): the dashboard is built from these.
public struct ServerComponents: Sendable {
    /// The configuration the server was built from.
    public let configuration: ServerConfiguration
    /// The core: apps, verifiers, the ledger.
    public let service: PurchaseService
    /// Runs reconciliations with the App Store Server API on demand.
    public let reconciliations: ReconciliationRunner
    /// Counts wrong secrets and makes their addresses wait.
    public let signInThrottle: SignInThrottle
    /// The key every replica of the deployment shares (keys derived from it are the same on all).
    public let serverKey: P256.Signing.PrivateKey
    /// The clock.
    public let now: @Sendable () -> Date
    /// The server's logger.
    public let logger: Logger
}

/// The pieces of a server, made from its configuration.
struct ServerParts {
    let store: any LedgerStore
    let serverKey: P256.Signing.PrivateKey
    let service: PurchaseService
    let reconciler: Reconciler
    let reconciliations: ReconciliationRunner
    let webhooks: WebhookDispatcher

    static func make(_ configuration: ServerConfiguration, _ dependencies: ServerDependencies) async throws -> Self {
        let serverKey = try loadOrMakeKey(configuration.serverKeyPath, key: "serverKey")
        var apps: [AppConfiguration] = []
        for (index, app) in configuration.apps.enumerated() {
            apps.append(try appConfiguration(app, index: index, server: configuration))
        }
        let store = try await openStore(configuration, logger: dependencies.logger)
        // Each part is given the roles of the one ledger that it uses.
        var service = PurchaseService(
            purchases: store, customers: store, balances: store, appleCalls: store, figures: store, outbox: store,
            upkeep: store, sessions: store, apps: apps, grants: GrantsCatalog(), productTypes: [:],
            clawbackPolicy: configuration.clawbackPolicy, verifyReceiptClient: dependencies.verifyReceiptClient,
            exchange: dependencies.exchange, ocspTransport: dependencies.ocspTransport, now: dependencies.now,
            metrics: dependencies.metrics, logger: dependencies.logger, realNow: dependencies.realNow,
            retention: store, stripeEvents: store)
        service.currencyRates = configuration.currencyRates
        let reconciler = Reconciler(service: service, runs: store, exchange: dependencies.exchange)
        return ServerParts(
            store: store, serverKey: serverKey, service: service, reconciler: reconciler,
            reconciliations: ReconciliationRunner(reconciler: reconciler),
            webhooks: WebhookDispatcher(
                outbox: store, endpoints: configuration.webhooks, exchange: dependencies.exchange,
                leaseDuration: TimeInterval(configuration.webhookLeaseSeconds),
                now: dependencies.realNow ?? dependencies.now))
    }

    static func openStore(_ configuration: ServerConfiguration, logger: Logger) async throws -> any LedgerStore {
        let database = configuration.database
        if database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") {
            let options = try configuration.postgresOptions()
            do { return try PostgresLedger(options: options, logger: logger) } catch let error as LedgerStoreError {
                throw ServerError(.invalidConfiguration, error.message)
            }
        }
        guard database.hasPrefix("sqlite:") else {
            throw ServerError(.invalidConfiguration, "database: expected sqlite:PATH or postgres://…")
        }
        let path = try configuration.sqliteLedgerPath() ?? ":memory:"
        if path != ":memory:" {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            guard FileManager.default.fileExists(atPath: directory.path) else {
                throw ServerError(.invalidConfiguration, "database: the directory \(directory.path) does not exist")
            }
        }
        let ledger: SQLiteLedger
        do { ledger = try SQLiteLedger(path: path) } catch {
            throw ServerError(.invalidConfiguration, "database: \(path) cannot be opened: \(error)")
        }
        if let warning = SQLiteLedger.permissionWarning(path: path) { logger.warning("\(warning)") }
        return ledger
    }

    static func appConfiguration(
        _ app: ServerConfiguration.App, index: Int, server: ServerConfiguration
    ) throws -> AppConfiguration {
        let prefix = "apps[\(index)]"
        var roots: [Certificate] = []
        for (rootIndex, path) in app.extraRootPaths.enumerated() {
            let key = "\(prefix).extraRoots[\(rootIndex)]"
            let text = try read(path, key: key)
            guard let certificate = try? Certificate(pemEncoded: text) else {
                throw ServerError(.invalidConfiguration, "\(key): \(path) is not a PEM certificate")
            }
            roots.append(certificate)
        }
        var catalog: StoreKitConfiguration?
        if let path = app.catalogPath {
            do {
                catalog = try StoreKitConfiguration.load(from: Data(read(path, key: "\(prefix).catalog").utf8))
            } catch let error as ServerError {
                throw error
            } catch {
                throw ServerError(.invalidConfiguration, "\(prefix).catalog: \(path) is not a .storekit file: \(error)")
            }
        }
        var grants: GrantsCatalog?
        if let path = app.grantsPath {
            do { grants = try GrantsCatalog.load(from: Data(read(path, key: "\(prefix).grants").utf8)) } catch {
                throw ServerError(.invalidConfiguration, "\(prefix).grants: \(error.message)")
            }
        }
        var access: ServerAPIAccess?
        if let api = app.appStoreServerAPI {
            let key = "\(prefix).appStoreServerAPI.privateKey"
            let text = try read(api.privateKeyPath, key: key)
            guard let privateKey = try? P256.Signing.PrivateKey(pemRepresentation: text) else {
                throw ServerError(.invalidConfiguration, "\(key): \(api.privateKeyPath) is not a P-256 .p8 key")
            }
            access = ServerAPIAccess(
                productionURL: app.endpoints.serverAPIProduction, sandboxURL: app.endpoints.serverAPISandbox,
                keyID: api.keyID, issuerID: api.issuerID, privateKey: privateKey)
        }
        let keys = app.keys ?? server.keys
        var configuration = AppConfiguration(
            bundleID: app.bundleID, appAppleID: app.appAppleID, environments: Set(app.environments),
            sandboxRoots: roots, publicKey: keys.publishable, secretKey: keys.secret, sharedSecret: app.sharedSecret,
            verifyReceiptProductionURL: app.endpoints.verifyReceiptProduction,
            verifyReceiptSandboxURL: app.endpoints.verifyReceiptSandbox, grants: grants ?? GrantsCatalog(),
            productTypes: catalog?.productTypes, catalog: catalog, transferPolicy: app.transferPolicy,
            serverAPI: access, revocation: app.revocation, offers: app.offers, consumption: app.consumption,
            setsAppAccountTokens: app.setAppAccountTokens, smallBusinessProgram: app.smallBusinessProgram,
            customerTokens: app.customerTokens.map { CustomerTokenPolicy(secret: $0.secret, required: $0.required) },
            sandboxPurchases: app.sandboxPurchases, consentScopedData: app.consentScopedData)
        configuration.retention = app.retention
        configuration.stripe = app.stripe
        return configuration
    }

    static func read(_ path: String, key: String) throws(ServerError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ServerError(.invalidConfiguration, "\(key): \(path) cannot be read")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The server key at `path`, made (P-256, mode 0600) on first start.
    /// The private key in the PEM file at `path`, made there first when there is none. Replicas
    /// started together with no key file agree on one key: exactly one of them creates the file
    /// (``OwnerOnlyFiles/create(_:at:)`` never replaces a file), and the others read the key it wrote.
    static func loadOrMakeKey(_ path: String, key: String) throws -> P256.Signing.PrivateKey {
        if !FileManager.default.fileExists(atPath: path) {
            let privateKey = P256.Signing.PrivateKey()
            let created: Bool
            do {
                // Created owner-only: the key is never readable by others, not even for a moment.
                created = try OwnerOnlyFiles.create(
                    Data((privateKey.pemRepresentation + "\n").utf8), at: URL(fileURLWithPath: path))
            } catch {
                throw ServerError(.invalidConfiguration, "\(key): \(path) cannot be written: \(error)")
            }
            if created { return privateKey }
        }
        let text = try read(path, key: key)
        guard let privateKey = try? P256.Signing.PrivateKey(pemRepresentation: text) else {
            throw ServerError(.invalidConfiguration, "\(key): \(path) is not a P-256 private key in PEM")
        }
        return privateKey
    }
}

extension StoreKitConfiguration {
    /// Product types by ID, for transactions read from receipts (which do not say).
    public var productTypes: [String: AppStoreModels.ProductType] {
        var types: [String: AppStoreModels.ProductType] = [:]
        for product in (products ?? []) + (nonRenewingSubscriptions ?? []) {
            guard let id = product.productID else { continue }
            switch product.type {
            case .consumable: types[id] = .consumable
            case .nonRenewingSubscription: types[id] = .nonRenewingSubscription
            default: types[id] = .nonConsumable
            }
        }
        for subscription in allSubscriptions {
            if let id = subscription.productID { types[id] = .autoRenewableSubscription }
        }
        return types
    }
}

extension ServerConfiguration {
    /// The file of the SQLite ledger this configuration names; `nil` for a ledger in memory
    /// (`sqlite::memory:`) or in PostgreSQL.
    /// - Throws: ``ServerError`` `invalidConfiguration` for `sqlite:` without a path.
    public func sqliteLedgerPath() throws -> String? {
        guard database.hasPrefix("sqlite:") else { return nil }
        let path = String(database.dropFirst("sqlite:".count))
        guard !path.isEmpty else { throw ServerError(.invalidConfiguration, "database: sqlite: needs a path") }
        return path == ":memory:" ? nil : path
    }

    /// Makes the reconciler of a server with this configuration (its ledger, brought up to date,
    /// and its apps), runs `body` with it and closes the ledger: for `kakin server import`.
    public func withReconciler<R: Sendable>(
        logger: Logger = Logger(label: "kakin.server"), _ body: (Reconciler) async throws -> R
    ) async throws -> R {
        try await withParts(logger: logger) { try await body($0.reconciler) }
    }

    /// Makes the parts of a server with this configuration, runs `body` with them over the ledger
    /// brought up to date, and closes the ledger.
    func withParts<R: Sendable>(logger: Logger, _ body: (ServerParts) async throws -> R) async throws -> R {
        var dependencies = ServerDependencies()
        dependencies.logger = logger
        let parts = try await ServerParts.make(self, dependencies)
        return try await Self.migrating(parts.store) { _ in try await body(parts) }
    }

    /// Opens the ledger this configuration names, brings its schema up to date, runs `body` with
    /// it and closes it: for operators' commands run beside the servers (`kakin server unlock`).
    public func withLedger<R: Sendable>(
        logger: Logger = Logger(label: "kakin.server"), _ body: (any LedgerStore) async throws -> R
    ) async throws -> R {
        try await Self.migrating(try await ServerParts.openStore(self, logger: logger), body)
    }

    /// Brings `store`'s schema up to date, runs `body` with it, and shuts it down, also when either throws.
    private static func migrating<R: Sendable>(
        _ store: any LedgerStore, _ body: (any LedgerStore) async throws -> R
    ) async throws -> R {
        do {
            try await store.migrate()
            let result = try await body(store)
            try await store.shutdown()
            return result
        } catch {
            try? await store.shutdown()
            throw error
        }
    }
}
