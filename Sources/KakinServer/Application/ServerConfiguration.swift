public import AppStoreModels
public import AppStoreSecurity
public import Foundation
public import KakinLedger

/// Everything `kakin server` needs to run in front of the real App Store, as read from its JSON
/// configuration file. Paths are plain strings; ``buildApplication(configuration:dependencies:)``
/// reads the files they name and stops with one line naming the key when one is missing or bad.
///
/// ```json
/// {
///   "listen": {"host": "0.0.0.0", "port": 8080},
///   "database": "sqlite:/var/lib/kakin/ledger.sqlite",
///   "serverKey": "/var/lib/kakin/server-key.pem",
///   "keys": {"publishable": "env:KAKIN_PUBLISHABLE_KEY", "secret": "env:KAKIN_SECRET_KEY"},
///   "webhooks": [{"url": "https://api.example.com/hooks/kakin", "secret": "env:KAKIN_WEBHOOK_SECRET"}],
///   "apps": [{
///     "bundleId": "com.example.app", "appAppleId": 1234567890,
///     "environments": ["Production", "Sandbox"],
///     "sharedSecret": "env:APP_SHARED_SECRET",
///     "appStoreServerAPI": {"keyId": "ABCDEF1234", "issuerId": "…", "privateKey": "/etc/kakin/SubscriptionKey_ABCDEF1234.p8"},
///     "catalog": "/etc/kakin/Products.storekit", "grants": "/etc/kakin/grants.json",
///     "transferPolicy": "transferToNewUser",
///     "revocation": "require",
///     "smallBusinessProgram": true
///   }]
/// }
/// ```
public struct ServerConfiguration: Sendable {
    /// Where the server listens.
    public struct Listen: Sendable {
        /// The address to bind (`listen.host`); `0.0.0.0` accepts connections from every interface.
        public var host: String = "127.0.0.1"
        /// The TCP port (`listen.port`); 0 takes any free port.
        public var port: Int = 8080
        /// Creates a listen address from its parts.
        public init(host: String = "127.0.0.1", port: Int = 8080) {
            self.host = host
            self.port = port
        }
    }

    /// The keys an app presents: the publishable one ships in the app, the secret one stays on servers.
    public struct Keys: Sendable {
        /// The key apps send on the customer endpoints; it ships inside the app, so it grants no more
        /// than what a customer may do.
        public var publishable: String
        /// The key of the app's own servers: spending, admin and content uploads. At least 16
        /// characters, and never the publishable key.
        public var secret: String
        /// Creates a key pair from its parts.
        public init(publishable: String, secret: String) {
            self.publishable = publishable
            self.secret = secret
        }
    }

    /// An in-app purchase key from App Store Connect (Users and Access → Integrations).
    public struct ServerAPIKey: Sendable {
        /// The key's ID, as App Store Connect shows it (`kid` of the server's tokens).
        public var keyID: String
        /// The issuer ID of the team, a UUID (`iss` of the server's tokens).
        public var issuerID: String
        /// The path of the `.p8` file.
        public var privateKeyPath: String
        /// Creates a key reference from its parts.
        public init(keyID: String, issuerID: String, privateKeyPath: String) {
            self.keyID = keyID
            self.issuerID = issuerID
            self.privateKeyPath = privateKeyPath
        }
    }

    /// Apple's hosts, or stand-ins (a `kakin sandbox`) for testing.
    public struct Endpoints: Sendable {
        /// Where production receipts are sent to verifyReceipt.
        public var verifyReceiptProduction = AppleEndpoints.verifyReceiptProduction
        /// Where sandbox receipts are sent to verifyReceipt (and production ones that answer 21007).
        public var verifyReceiptSandbox = AppleEndpoints.verifyReceiptSandbox
        /// The base URL of the App Store Server API for production data.
        public var serverAPIProduction = AppleEndpoints.serverAPIProduction
        /// The base URL of the App Store Server API for sandbox data.
        public var serverAPISandbox = AppleEndpoints.serverAPISandbox
        /// Creates endpoints naming Apple's own hosts.
        public init() {}
    }

    /// One app.
    public struct App: Sendable {
        /// The app's bundle ID (`bundleId`), which every transaction it sends must carry.
        public var bundleID: String
        /// The app's Apple ID from App Store Connect (`appAppleId`); required when Production is accepted,
        /// since production notifications and app transactions are checked against it.
        public var appAppleID: Int64?
        /// The environments whose data the server accepts for this app: Production, Sandbox or both.
        public var environments: [AppStoreEnvironment] = [.production, .sandbox]
        /// The app-specific shared secret sent with receipts to verifyReceipt; needed for
        /// auto-renewable subscriptions.
        public var sharedSecret: String?
        /// The in-app purchase key for the App Store Server API, which reconciliation needs; `nil` when
        /// the app has none.
        public var appStoreServerAPI: ServerAPIKey?
        /// The `.storekit` file served as the catalog and read for product types.
        public var catalogPath: String?
        /// The grants file: what each product gives.
        public var grantsPath: String?
        /// What happens when a purchase is restored by another customer than its owner.
        public var transferPolicy: TransferPolicy = .keepWithOriginal
        /// Whether the app is in the App Store Small Business Program (`smallBusinessProgram`):
        /// the metrics' proceeds then take Apple's commission at 15 %.
        public var smallBusinessProgram = false
        /// How signing certificates are checked for revocation; `nil` takes each environment's
        /// default (`require` for Production, `bestEffort` for Sandbox).
        public var revocation: RevocationMode?
        /// PEM files of roots trusted besides Apple Root CA - G3 (a sandbox App Store's root).
        public var extraRootPaths: [String] = []
        /// Apple's hosts for this app, or stand-ins (`endpoints`).
        public var endpoints = Endpoints()
        /// Keys of this app only; the server's ``ServerConfiguration/keys`` otherwise.
        public var keys: Keys?
        /// Which promotional offers are signed, and for whom (`offers`).
        public var offers = OfferPolicy()
        /// What is told to Apple when a customer asks for a refund (`consumption`); nothing by default.
        public var consumption: ConsumptionPolicy?
        /// Whether purchases without an app account token, or moved to another customer, get their
        /// owner's token through the App Store Server API (`setAppAccountTokens`, default true).
        public var setAppAccountTokens = true
        /// `customerTokens`: `{"secret": "env:…", "required": true}`, the secret the app's backend
        /// signs customer tokens with (at least 32 characters) and whether publishable-key requests
        /// about identified customers must carry one (`required`, default true).
        public var customerTokens: (secret: String, required: Bool)?
        /// `sandboxPurchases`: `grant` (default) or `allowList`, with `sandboxAllowList` the app
        /// user IDs whose sandbox purchases are accepted.
        public var sandboxPurchases: SandboxPurchasePolicy = .grant
        /// `consentScopedData`: what is erased for a customer whose parent withdraws consent
        /// (`RESCIND_CONSENT`), of `aliases` and `appTransactions`; both by default, `[]` for none.
        public var consentScopedData: Set<ConsentScopedData> = Set(ConsentScopedData.allCases)
        /// `retention`: how the App Store's `Get Retention Message` requests are answered (see
        /// ``RetentionPolicy``); `nil` answers with no choice.
        public var retention: RetentionPolicy?
        /// `stripe`: the app's Stripe account for web purchases (see ``StripeAccount``):
        /// `{"secretKey": "env:…", "webhookSecrets": ["env:…"], "products": [{"productId": …, "price": "price_…"}]}`,
        /// and `apiBase` for an emulator; `nil` when the app sells only in the App Store.
        public var stripe: StripeAccount?

        /// Creates an app with the defaults: both environments, keys shared with the server, Apple's hosts.
        public init(bundleID: String, appAppleID: Int64? = nil) {
            self.bundleID = bundleID
            self.appAppleID = appAppleID
        }
    }

    /// How the server logs.
    public enum LogFormat: String, Sendable, CaseIterable {
        /// One human-readable line per event.
        case text
        /// One JSON object per line, for log collectors.
        case json
    }

    /// Where the server listens (`listen`).
    public var listen = Listen()
    /// `sqlite:PATH`, `sqlite::memory:` for a throwaway ledger, or `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`
    /// for a ledger that several servers share (see `PostgresConnectionOptions`).
    public var database: String
    /// The `postgres` object: the pool size and TLS settings of a PostgreSQL database, over what
    /// its URL says.
    public var postgresMaxConnections: Int?
    /// `postgres.connectionWaitSeconds`: how long a request waits for a pooled connection, and
    /// each statement's `statement_timeout`.
    public var postgresConnectionWaitSeconds: Int?
    /// `postgres.writers`: how many writers commit this server's writes (see
    /// `PostgresConnectionOptions/writers`).
    public var postgresWriters: Int?
    /// `postgres.tls`: whether connections to PostgreSQL use TLS; `nil` takes the URL's `sslmode`
    /// or the default.
    public var postgresTLS: PostgresConnectionOptions.TLSMode?
    /// A PEM file of the certificate authority of the PostgreSQL server.
    public var postgresCAFile: String?
    /// The PostgreSQL schema of the ledger's tables.
    public var postgresSchema: String?
    /// The PEM file of the key that signs customer answers; made on first start when absent.
    public var serverKeyPath: String
    /// The keys of every app that has none of its own.
    public var keys: Keys
    /// Where ledger events are posted, each signed with its endpoint's secret.
    public var webhooks: [WebhookEndpoint] = []
    /// The apps served, at least one; each bundle ID once.
    public var apps: [App]
    /// How currency is taken back when a consumable purchase is refunded after some was spent.
    public var clawbackPolicy: ClawbackPolicy = .clampAtZero
    /// `logging.format`: lines for people or JSON for log collectors.
    public var logFormat: LogFormat = .text
    /// `trace` … `critical`; `info` logs one line per request.
    public var logLevel: String = "info"
    /// The largest JSON body accepted; larger ones get 413.
    public var maxBodyBytes = 256 * 1024
    /// The largest hosted-content package accepted.
    public var maxContentBytes = 512 * 1024 * 1024
    /// A connection that sends nothing for this long is closed (stalled clients cannot pile up).
    public var idleTimeoutSeconds = 30
    /// The most client connections kept open; each one beyond closes the connection idle the
    /// longest. `nil`: the open-file limit less 256 descriptors kept for everything else.
    public var maxConnections: Int?
    /// How often undelivered webhooks are retried and sent.
    public var webhookIntervalSeconds = 1
    /// How long a server holds the webhook events it took before another server may send them
    /// (when it died before reporting).
    public var webhookLeaseSeconds = 300
    /// How often reconciliation runs for apps with an App Store Server API key; 0 turns it off.
    public var reconcileIntervalSeconds = 3600
    /// `jobs.appleRequestIntervalSeconds`: how often the calls owed to the App Store Server API
    /// (consumption information, app account tokens) are looked for and made.
    public var appleRequestIntervalSeconds = 30
    /// `jobs.metricsIntervalSeconds`: how often the subscription metrics are brought up to date
    /// with the purchases changed since.
    public var metricsIntervalSeconds = 2
    /// `metrics.reportingCurrency` and `metrics.rates`: the rates the metrics convert amounts
    /// with, to one reporting currency (`{"reportingCurrency": "USD", "rates": {"EUR": 1.08}}`:
    /// a euro is 1.08 dollars); `nil` keeps each currency apart. No rate is ever fetched.
    public var currencyRates: CurrencyRates?
    /// The operators' dashboard at `/dashboard`.
    public var dashboard = DashboardConfiguration()
    /// How wrong dashboard passwords and API keys are slowed down.
    public var signInThrottle = SignInThrottlePolicy()
    /// `rateLimits`: how much publishable-key traffic one client address may send.
    public var rateLimits = RateLimitPolicy()
    /// `operations`: who may read `/metrics` (a bearer token, a listener of its own, or both).
    public var operations = OperationsConfiguration()

    /// Creates a configuration with what has no default; everything else takes its default.
    public init(database: String, serverKeyPath: String, keys: Keys, apps: [App]) {
        self.database = database
        self.serverKeyPath = serverKeyPath
        self.keys = keys
        self.apps = apps
    }
}

extension ServerConfiguration {
    /// Reads a configuration file. Relative paths in it are taken from the file's directory.
    public static func load(
        contentsOf file: URL, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ServerError) -> ServerConfiguration {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw ServerError(.invalidConfiguration, "\(file.path): the configuration file cannot be read")
        }
        return try parse(data, environment: environment, relativeTo: file.deletingLastPathComponent())
    }

    /// Reads the JSON form; every value may be `env:NAME`; unknown keys are refused.
    public static func parse(
        _ data: Data, environment: [String: String] = [:], relativeTo base: URL? = nil
    ) throws(ServerError) -> ServerConfiguration {
        let root = try ConfigurationReader.root(data, environment: environment)
        func path(_ text: String) -> String {
            guard let base, !text.hasPrefix("/") else { return text }
            return base.appendingPathComponent(text).standardizedFileURL.path
        }
        var listen = Listen()
        if let reader = try root.object("listen") {
            listen.host = try reader.string("host") ?? listen.host
            listen.port = Int(try reader.integer("port", in: 0...65_535) ?? Int64(listen.port))
            try reader.finish()
        }
        guard let database = try root.string("database") else { throw root.failure("database", "is required") }
        guard database.hasPrefix("sqlite:") || database.hasPrefix("postgres://") || database.hasPrefix("postgresql://")
        else { throw root.failure("database", "expected sqlite:PATH or postgres://…") }
        let serverKey = path(try root.requiredString("serverKey"))
        guard let keysReader = try root.object("keys") else { throw root.failure("keys", "is required") }
        let keys = try readKeys(keysReader)

        var configuration = ServerConfiguration(
            database: database.hasPrefix("sqlite:") && database != "sqlite::memory:"
                ? "sqlite:" + path(String(database.dropFirst(7))) : database,
            serverKeyPath: serverKey, keys: keys, apps: [])
        configuration.listen = listen
        if let postgres = try root.object("postgres") {
            guard !database.hasPrefix("sqlite:") else {
                throw root.failure("postgres", "applies only to a postgres:// database")
            }
            configuration.postgresMaxConnections = try postgres.integer("maxConnections", in: 1...1000).map { Int($0) }
            configuration.postgresConnectionWaitSeconds = try postgres.integer("connectionWaitSeconds", in: 1...600)
                .map { Int($0) }
            configuration.postgresWriters = try postgres.integer("writers", in: 1...64).map { Int($0) }
            configuration.postgresTLS = try postgres.choice(
                "tls", PostgresConnectionOptions.TLSMode.self, allowed: PostgresConnectionOptions.TLSMode.allCases)
            configuration.postgresCAFile = try postgres.string("caFile").map(path)
            configuration.postgresSchema = try postgres.string("schema")
            try postgres.finish()
        }
        if !database.hasPrefix("sqlite:") { _ = try configuration.postgresOptions() }
        for reader in try root.objects("webhooks") {
            guard let url = try reader.url("url") else { throw reader.failure("url", "is required") }
            configuration.webhooks.append(WebhookEndpoint(url: url, secret: try reader.requiredString("secret")))
            try reader.finish()
        }
        for reader in try root.objects("apps") {
            configuration.apps.append(try readApp(reader, path: path))
        }
        guard !configuration.apps.isEmpty else { throw root.failure("apps", "name at least one app") }
        var seen: Set<String> = []
        for (index, app) in configuration.apps.enumerated() where !seen.insert(app.bundleID).inserted {
            throw ServerError(.invalidConfiguration, "apps[\(index)].bundleId: \(app.bundleID) is listed twice")
        }
        configuration.clawbackPolicy =
            try root.choice("clawbackPolicy", ClawbackPolicy.self, allowed: [.clampAtZero, .allowNegative])
            ?? configuration.clawbackPolicy
        if let logging = try root.object("logging") {
            configuration.logFormat =
                try logging.choice("format", LogFormat.self, allowed: LogFormat.allCases) ?? configuration.logFormat
            if let level = try logging.string("level") {
                let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
                guard levels.contains(level) else {
                    throw logging.failure("level", "expected one of \(levels.joined(separator: ", "))")
                }
                configuration.logLevel = level
            }
            try logging.finish()
        }
        if let limits = try root.object("limits") {
            configuration.maxBodyBytes = Int(
                try limits.integer("maxBodyBytes", in: 1024...(64 << 20)) ?? Int64(configuration.maxBodyBytes))
            configuration.maxContentBytes = Int(
                try limits.integer("maxContentBytes", in: 1024...(4 << 30)) ?? Int64(configuration.maxContentBytes))
            configuration.idleTimeoutSeconds = Int(
                try limits.integer("idleTimeoutSeconds", in: 1...3600) ?? Int64(configuration.idleTimeoutSeconds))
            configuration.maxConnections = try limits.integer("maxConnections", in: 16...10_000_000).map { Int($0) }
            try limits.finish()
        }
        if let jobs = try root.object("jobs") {
            configuration.webhookIntervalSeconds = Int(
                try jobs.integer("webhookIntervalSeconds", in: 1...3600) ?? Int64(configuration.webhookIntervalSeconds))
            configuration.reconcileIntervalSeconds = Int(
                try jobs.integer("reconcileIntervalSeconds", in: 0...(7 * 86_400))
                    ?? Int64(configuration.reconcileIntervalSeconds))
            configuration.appleRequestIntervalSeconds = Int(
                try jobs.integer("appleRequestIntervalSeconds", in: 1...3600)
                    ?? Int64(configuration.appleRequestIntervalSeconds))
            configuration.webhookLeaseSeconds = Int(
                try jobs.integer("webhookLeaseSeconds", in: 10...86_400) ?? Int64(configuration.webhookLeaseSeconds))
            configuration.metricsIntervalSeconds = Int(
                try jobs.integer("metricsIntervalSeconds", in: 1...3600) ?? Int64(configuration.metricsIntervalSeconds))
            try jobs.finish()
        }
        if let metrics = try root.object("metrics") {
            let currency = try metrics.requiredString("reportingCurrency")
            guard currency.count == 3, currency.allSatisfy({ $0.isASCII && $0.isUppercase }) else {
                throw metrics.failure("reportingCurrency", "expected an ISO 4217 code such as USD; found \(currency)")
            }
            var rates: [String: Double] = [:]
            if let table = try metrics.object("rates") {
                rates = try table.positiveNumbers()
                if let code = rates.keys.sorted().first(where: { $0.count != 3 || !$0.allSatisfy { $0.isASCII && $0.isUppercase } }) {
                    throw table.failure(code, "expected an ISO 4217 currency code")
                }
            }
            configuration.currencyRates = CurrencyRates(reportingCurrency: currency, rates: rates)
            try metrics.finish()
        }
        if let dashboard = try root.object("dashboard") {
            configuration.dashboard.enabled = try dashboard.boolean("enabled") ?? configuration.dashboard.enabled
            // `operatorKey` opens every app; `adminPassword` is its older name, still read.
            if let key = try dashboard.string("operatorKey") {
                guard key.count >= 16 else { throw dashboard.failure("operatorKey", "must be at least 16 characters") }
                configuration.dashboard.operatorKey = key
            }
            if let password = try dashboard.string("adminPassword") {
                guard configuration.dashboard.operatorKey == nil else {
                    throw dashboard.failure("adminPassword", "is the older name of operatorKey: give one of them")
                }
                guard password.count >= 12 else {
                    throw dashboard.failure("adminPassword", "must be at least 12 characters")
                }
                configuration.dashboard.operatorKey = password
            }
            configuration.dashboard.trustForwardedProto =
                try dashboard.boolean("trustForwardedProto") ?? configuration.dashboard.trustForwardedProto
            configuration.dashboard.secureCookies =
                try dashboard.boolean("secureCookies") ?? configuration.dashboard.secureCookies
            configuration.dashboard.sessionSeconds = Int(
                try dashboard.integer("sessionMinutes", in: 1...(30 * 24 * 60)).map { $0 * 60 }
                    ?? Int64(configuration.dashboard.sessionSeconds))
            try dashboard.finish()
        }
        if let limits = try root.object("rateLimits") {
            configuration.rateLimits = try RateLimitPolicy.read(limits)
        }
        if let operations = try root.object("operations") {
            configuration.operations = try OperationsConfiguration.read(operations, listen: listen)
        }
        if let throttle = try root.object("signInThrottle") {
            var policy = configuration.signInThrottle
            policy.sourceAttempts = Int(try throttle.integer("sourceAttempts", in: 1...10_000) ?? Int64(policy.sourceAttempts))
            policy.accountAttempts = Int(
                try throttle.integer("accountAttempts", in: 1...100_000) ?? Int64(policy.accountAttempts))
            policy.firstWaitSeconds = Int(
                try throttle.integer("firstWaitSeconds", in: 1...3600) ?? Int64(policy.firstWaitSeconds))
            policy.maxWaitSeconds = Int(
                try throttle.integer("maxWaitSeconds", in: 1...86_400) ?? Int64(policy.maxWaitSeconds))
            policy.windowSeconds = Int(try throttle.integer("windowSeconds", in: 1...86_400) ?? Int64(policy.windowSeconds))
            policy.trustForwardedFor = try throttle.boolean("trustForwardedFor") ?? policy.trustForwardedFor
            guard policy.maxWaitSeconds >= policy.firstWaitSeconds else {
                throw throttle.failure("maxWaitSeconds", "must be at least firstWaitSeconds")
            }
            try throttle.finish()
            configuration.signInThrottle = policy
        }
        // One setting says whether the proxy in front names the client: for the sign-in throttle
        // and the rate limits alike.
        if let trusted = try root.boolean("trustForwardedFor") {
            configuration.signInThrottle.trustForwardedFor = trusted || configuration.signInThrottle.trustForwardedFor
        }
        try root.finish()
        return configuration
    }

    /// The PostgreSQL connection settings: the URL's, then the `postgres` object's.
    public func postgresOptions() throws(ServerError) -> PostgresConnectionOptions {
        var options: PostgresConnectionOptions
        do { options = try PostgresConnectionOptions(url: database) } catch {
            throw ServerError(.invalidConfiguration, error.message)
        }
        if let postgresMaxConnections { options.maxConnections = postgresMaxConnections }
        if let postgresConnectionWaitSeconds { options.connectionWait = .seconds(postgresConnectionWaitSeconds) }
        if let postgresWriters { options.writers = postgresWriters }
        if let postgresTLS { options.tls = postgresTLS }
        if let postgresCAFile { options.caFile = postgresCAFile }
        if let postgresSchema { options.schema = postgresSchema }
        return options
    }

    private static func readKeys(_ reader: ConfigurationReader) throws(ServerError) -> Keys {
        let keys = Keys(
            publishable: try reader.requiredString("publishable"), secret: try reader.requiredString("secret"))
        guard keys.publishable != keys.secret else {
            throw reader.failure("secret", "must differ from the publishable key")
        }
        guard keys.secret.count >= 16 else { throw reader.failure("secret", "must be at least 16 characters") }
        try reader.finish()
        return keys
    }

    private static func readApp(
        _ reader: ConfigurationReader, path: (String) -> String
    ) throws(ServerError) -> App {
        var app = App(bundleID: try reader.requiredString("bundleId"))
        app.appAppleID = try reader.integer("appAppleId", in: 1...Int64.max)
        let environments = try reader.strings("environments")
        if !environments.isEmpty {
            app.environments = []
            for name in environments {
                guard
                    let environment = [AppStoreEnvironment.production, .sandbox].first(where: { $0.rawValue == name })
                else { throw reader.failure("environments", "expected Production and/or Sandbox; found \(name)") }
                app.environments.append(environment)
            }
        }
        if app.environments.contains(.production), app.appAppleID == nil {
            throw reader.failure(
                "appAppleId", "is required to accept Production data (App Store Connect → App Information → Apple ID)")
        }
        app.sharedSecret = try reader.string("sharedSecret")
        if let api = try reader.object("appStoreServerAPI") {
            app.appStoreServerAPI = ServerAPIKey(
                keyID: try api.requiredString("keyId"), issuerID: try api.requiredString("issuerId"),
                privateKeyPath: path(try api.requiredString("privateKey")))
            try api.finish()
        }
        app.catalogPath = try reader.string("catalog").map(path)
        app.grantsPath = try reader.string("grants").map(path)
        app.transferPolicy =
            try reader.choice("transferPolicy", TransferPolicy.self, allowed: TransferPolicy.allCases)
            ?? app.transferPolicy
        app.smallBusinessProgram = try reader.boolean("smallBusinessProgram") ?? app.smallBusinessProgram
        app.revocation = try reader.choice("revocation", RevocationMode.self, allowed: RevocationMode.allCases)
        app.extraRootPaths = try reader.strings("extraRoots").map(path)
        if let endpoints = try reader.object("endpoints") {
            app.endpoints.verifyReceiptProduction =
                try endpoints.url("verifyReceiptProduction") ?? app.endpoints.verifyReceiptProduction
            app.endpoints.verifyReceiptSandbox =
                try endpoints.url("verifyReceiptSandbox") ?? app.endpoints.verifyReceiptSandbox
            app.endpoints.serverAPIProduction =
                try endpoints.url("serverAPIProduction") ?? app.endpoints.serverAPIProduction
            app.endpoints.serverAPISandbox = try endpoints.url("serverAPISandbox") ?? app.endpoints.serverAPISandbox
            try endpoints.finish()
        }
        if let keys = try reader.object("keys") { app.keys = try readKeys(keys) }
        if let offers = try reader.object("offers") {
            app.offers.defaultRule =
                try offers.choice("default", OfferEligibilityRule.self, allowed: OfferEligibilityRule.allCases)
                ?? app.offers.defaultRule
            for rule in try offers.objects("rules") {
                let offerID = try rule.requiredString("offerId")
                guard
                    let eligibility = try rule.choice(
                        "eligibility", OfferEligibilityRule.self, allowed: OfferEligibilityRule.allCases)
                else { throw rule.failure("eligibility", "is required") }
                app.offers.rules[offerID] = eligibility
                try rule.finish()
            }
            try offers.finish()
        }
        app.setAppAccountTokens = try reader.boolean("setAppAccountTokens") ?? true
        if let tokens = try reader.object("customerTokens") {
            let secret = try tokens.requiredString("secret")
            guard secret.utf8.count >= 32 else { throw tokens.failure("secret", "must be at least 32 characters") }
            app.customerTokens = (secret, try tokens.boolean("required") ?? true)
            try tokens.finish()
        }
        let allowList = try reader.strings("sandboxAllowList")
        switch try reader.string("sandboxPurchases") ?? "grant" {
        case "grant":
            guard allowList.isEmpty else {
                throw reader.failure("sandboxAllowList", "applies only with \"sandboxPurchases\": \"allowList\"")
            }
        case "allowList": app.sandboxPurchases = .allowList(Set(allowList))
        case let other: throw reader.failure("sandboxPurchases", "expected grant or allowList; found \(other)")
        }
        if let scoped = try reader.optionalStrings("consentScopedData") {
            app.consentScopedData = []
            for name in scoped {
                guard let data = ConsentScopedData(rawValue: name) else {
                    throw reader.failure(
                        "consentScopedData",
                        "expected \(ConsentScopedData.allCases.map(\.rawValue).joined(separator: " or ")); found \(name)")
                }
                app.consentScopedData.insert(data)
            }
        }
        if let consumption = try reader.object("consumption") {
            var policy = ConsumptionPolicy()
            policy.customersConsented = try consumption.boolean("customersConsented") ?? false
            policy.sampleContentProvided = try consumption.boolean("sampleContentProvided") ?? false
            policy.declineWhenUsed = try consumption.boolean("declineWhenUsed") ?? false
            policy.grantWithinDays = try consumption.integer("grantWithinDays", in: 0...365).map { Int($0) }
            try consumption.finish()
            app.consumption = policy
        }
        if let retention = try reader.object("retention") { app.retention = try readRetentionPolicy(retention) }
        if let stripe = try reader.object("stripe") { app.stripe = try readStripeAccount(stripe) }
        try reader.finish()
        return app
    }

    /// `apps[].stripe`: the account's keys, webhook secrets, web products (with their trials) and
    /// the web checkout's publishable key and return URLs, checked as
    /// ``StripeAccount/check()`` says.
    private static func readStripeAccount(_ stripe: ConfigurationReader) throws(ServerError) -> StripeAccount {
        var account = StripeAccount(
            secretKey: try stripe.requiredString("secretKey"), webhookSecrets: try stripe.strings("webhookSecrets"))
        if let base = try stripe.url("apiBase") { account.apiBase = base }
        account.publishableKey = try stripe.string("publishableKey")
        account.returnURLs = try stripe.strings("returnUrls")
        for product in try stripe.objects("products") {
            account.products.append(
                .init(
                    productID: try product.requiredString("productId"), price: try product.requiredString("price"),
                    trialDays: try product.integer("trialDays", in: 1...730).map { Int($0) }))
            try product.finish()
        }
        try stripe.finish()
        if let problem = account.check() { throw ServerError(.invalidConfiguration, "\(stripe.keyPath(problem))") }
        return account
    }

    /// The `stripe` object of a JSON document (`kakin serve`'s configuration file), read and
    /// checked as `apps[].stripe` is; `nil` when it has none.
    public static func stripeAccount(in data: Data) throws(ServerError) -> StripeAccount? {
        try ConfigurationReader.root(data, environment: ProcessInfo.processInfo.environment).object("stripe")
            .map(readStripeAccount)
    }

    /// The `retention` object of a JSON document (`kakin serve`'s configuration file), read as
    /// `apps[].retention` is; `nil` when it has none.
    public static func retentionPolicy(in data: Data) throws(ServerError) -> RetentionPolicy? {
        try ConfigurationReader.root(data, environment: [:]).object("retention").map(readRetentionPolicy)
    }

    private static func readRetentionPolicy(_ retention: ConfigurationReader) throws(ServerError) -> RetentionPolicy {
        let policy = RetentionPolicy(rules: try retention.objects("rules").map(readRetentionRule))
        try retention.finish()
        return policy
    }

    /// One rule of `apps[].retention.rules`: `name`, the conditions (`products`, `locales`,
    /// `states`, `minTenureDays`, `maxTenureDays`, `refunded`, `minLifetimeValue` as
    /// `{"currency", "amount"}` in the currency's units) and exactly one of `message`,
    /// `alternateProduct` (`{"productId", "message"}`) or `promotionalOffer` (`{"offerId", "message"}`).
    private static func readRetentionRule(_ rule: ConfigurationReader) throws(ServerError) -> RetentionRule {
        let name = try rule.requiredString("name")
        var answers: [RetentionAnswer] = []
        if let message = try rule.string("message") { answers.append(.message(messageID: message)) }
        if let alternate = try rule.object("alternateProduct") {
            answers.append(
                .alternateProduct(
                    productID: try alternate.requiredString("productId"), messageID: try alternate.requiredString("message")))
            try alternate.finish()
        }
        if let offer = try rule.object("promotionalOffer") {
            answers.append(
                .promotionalOffer(offerID: try offer.requiredString("offerId"), messageID: try offer.requiredString("message")))
            try offer.finish()
        }
        guard answers.count == 1, let answer = answers.first else {
            throw rule.failure("message", "a rule shows exactly one of message, alternateProduct or promotionalOffer")
        }
        var states: Set<RetentionSubscriberState> = []
        for state in try rule.strings("states") {
            guard let known = RetentionSubscriberState(rawValue: state) else {
                throw rule.failure("states", "expected trial, billingIssue or paid; found \(state)")
            }
            states.insert(known)
        }
        var floor: RetentionAmount?
        if let value = try rule.object("minLifetimeValue") {
            let currency = try value.requiredString("currency")
            guard let amount = try value.integer("amount", in: 0...1_000_000_000) else {
                throw value.failure("amount", "is required")
            }
            floor = RetentionAmount(currency: currency.uppercased(), milliunits: amount * 1000)
            try value.finish()
        }
        let result = RetentionRule(
            name: name, products: Set(try rule.strings("products")), locales: try rule.strings("locales"), states: states,
            minTenureDays: try rule.integer("minTenureDays", in: 0...36_500).map { Int($0) },
            maxTenureDays: try rule.integer("maxTenureDays", in: 0...36_500).map { Int($0) },
            refunded: try rule.boolean("refunded"), minLifetimeValue: floor, answer: answer)
        try rule.finish()
        return result
    }
}
