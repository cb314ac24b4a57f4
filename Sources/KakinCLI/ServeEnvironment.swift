import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Crypto
import Foundation
import Hummingbird
import KakinCore
import KakinDashboard
import KakinServer
import KakinLedger
import Logging
import NIOCore
import ServiceLifecycle
import StoreSandbox

/// Everything `kakin serve` runs, made from its options and its data directory: the purchase
/// server (built by the same ``buildApplication(configuration:dependencies:)`` as `kakin server`)
/// and an embedded sandbox App Store wired to each other, as a real backend and the App Store
/// are: verifyReceipt and the App Store Server API point at the sandbox, the sandbox's root is
/// the server's extra root, and the sandbox sends its notifications to the server.
struct ServeEnvironment {
    struct Options {
        var host = "127.0.0.1"
        var port = 8080
        var sandboxPort = 8081
        var data = "kakin-data"
        var catalog = "Examples/Catalog/Kakin.storekit"
        var grants = "Examples/Catalog/Kakin.grants.json"
        var bundleID = "com.example.kakin"
        var appAppleID: Int64 = 6_450_000_001
        var clawbackPolicy: ClawbackPolicy = .clampAtZero
        var transferPolicy: TransferPolicy = .keepWithOriginal
        /// How the server checks the signing certificates for revocation; `nil` takes the
        /// Sandbox default (`bestEffort`).
        var revocation: RevocationMode?
        var webhooks: [WebhookEndpoint] = []
        var logFormat: ServerConfiguration.LogFormat = .text
        var adminPassword: String?
        /// The purchase ledger's URL; SQLite in the data directory when `nil`.
        var database: String?
        /// Whether publishable-key requests are limited per client address (`--rate-limits`).
        var rateLimits = true
        /// Seconds between reconciliations with the App Store and Stripe (`--reconcile-interval`).
        var reconcileIntervalSeconds = 600
        /// What other hosts present (`Authorization: Bearer`) to use the sandbox's device and
        /// control APIs; without it, only this machine may when the host is not loopback.
        var sandboxToken: String?
        /// The app's retention rules (the configuration file's `retention`).
        var retention: RetentionPolicy?
        /// The app's Stripe account and web checkout, from the configuration file's `stripe`.
        var stripe: StripeAccount?
        /// How the sandbox runs Retention Messaging's performance test.
        var retentionPerformanceTest = SandboxRetention.Configuration.defaultPerformanceTest
    }

    /// Keys made on first start and kept in `DATA/keys.json`.
    struct Keys: Codable {
        var publicKey: String
        var secretKey: String
        var sharedSecret: String
        var apiKeyID: String
        var apiIssuerID: String
    }

    /// Files of the data directory.
    enum Files {
        static let keys = "keys.json"
        /// The App Store Server API key the server uses against the sandbox (a `.p8`).
        static let apiKey = "api-key.p8"
        static let serverKey = "server-key.pem"
        static let ledger = "kakin.sqlite"
        static let sandbox = "sandbox"
        /// The sandbox's Retention Messaging uploads, inside ``sandbox``.
        static let retentionUploads = "retention.json"
    }

    let options: Options
    let keys: Keys
    let sandbox: SandboxService
    let server: ServerConfiguration

    var serverURL: String { "http://\(options.host):\(options.port)" }
    var sandboxURL: String { "http://\(options.host):\(options.sandboxPort)" }
    /// Who may use the sandbox's device and control APIs: everyone on a loopback host (no other
    /// machine reaches it); otherwise this machine, and other hosts with the sandbox token if one
    /// was given.
    var sandboxAccess: SandboxAccessPolicy { SandboxAccessPolicy.forHost(options.host, token: options.sandboxToken) }

    /// The sandbox's routes behind ``sandboxAccess``; `isLocal` decides which peers are on this
    /// machine (tests play another host with one that says no).
    func sandboxRouter(
        isLocal: @escaping @Sendable (SocketAddress?) -> Bool = SandboxAccessPolicy.isLoopback
    ) -> Router<SandboxRequestContext> {
        sandbox.router(access: SandboxAccessPolicy(sandboxAccess.rule, isLocal: isLocal))
    }

    /// What ``sandboxAccess`` means, in one line for the start banner.
    var sandboxAccessSummary: String {
        switch sandboxAccess.rule {
        case .everyone: "this machine only (bound to \(options.host))"
        case .loopbackOnly:
            "device and control APIs answer this machine only; other hosts are refused (--sandbox-token TOKEN lets them in)"
        case .loopbackOrToken:
            "device and control APIs answer this machine, and other hosts sending Authorization: Bearer <sandbox token>"
        }
    }

    /// The sandbox's OCSP responder, named in its intermediate and leaf certificates.
    var ocspURL: String { Self.ocspURL(options) }

    static func ocspURL(_ options: Options) -> String { "http://\(options.host):\(options.sandboxPort)/ocsp" }

    static func make(_ options: Options) async throws -> ServeEnvironment {
        let data = URL(fileURLWithPath: options.data)
        // The data folder holds the server's signing key, the API key and the ledger: the owner's only.
        try OwnerOnlyFiles.createDirectory(at: data)
        let keys = try loadOrMakeKeys(in: data)
        let apiKeyURL = data.appendingPathComponent(Files.apiKey)
        let apiKey = try loadOrMakeKey(apiKeyURL)

        // The sandbox App Store.
        let sandboxData = data.appendingPathComponent(Files.sandbox)
        let caDirectory = sandboxData.appendingPathComponent("ca")
        // The intermediate and the leaf name the sandbox's own OCSP responder; a CA made before,
        // or for another port, gets a new intermediate and leaf with this URL, under the same root.
        let authority = try SandboxCertificateAuthority.loadOrCreate(in: caDirectory, ocspURL: ocspURL(options))
        let catalog = try SandboxCatalog.load(storeKitFile: URL(fileURLWithPath: options.catalog))
        let engine = try SandboxEngine(
            signer: SandboxSigner(authority: authority, bundleID: options.bundleID, appAppleID: options.appAppleID),
            clock: SandboxClock(), store: try SQLiteStateStore(directory: sandboxData),
            storefrontIDs: catalog.storefrontIdentifiers, authorityDirectory: caDirectory,
            commitmentPlans: catalog.commitmentPlanLookup, products: catalog.engineLookup)
        try await engine.updateSettings(
            SandboxSettingsUpdate(
                notificationURL: URL(string: "http://\(options.host):\(options.port)/v1/notifications/apple").map { .set($0) }
                    ?? .keep))
        // The cancel page asks the server's own Get Retention Message endpoint, as the real-time
        // URL configured in App Store Connect would.
        let retention = SandboxRetention(
            engine: engine,
            configuration: .init(
                performanceTest: options.retentionPerformanceTest,
                realtimeURL: URL(string: "http://\(options.host):\(options.port)/v1/retention/apple")))
        // Uploads are kept beside the sandbox's state, so a restart keeps them.
        try await retention.keepUploads(in: sandboxData.appendingPathComponent(Files.retentionUploads))
        let sandbox = SandboxService(
            engine: engine, catalog: catalog,
            configuration: .init(
                sharedSecret: keys.sharedSecret,
                apiKeys: [.init(keyID: keys.apiKeyID, issuerID: keys.apiIssuerID, publicKey: apiKey.publicKey)],
                rateLimits: .apple),
            retention: retention)

        // The purchase server, configured as `kakin server` would be against the sandbox.
        let sandboxBase = "http://\(options.host):\(options.sandboxPort)"
        var app = ServerConfiguration.App(bundleID: options.bundleID, appAppleID: options.appAppleID)
        app.environments = [.sandbox]
        app.sharedSecret = keys.sharedSecret
        app.appStoreServerAPI = .init(keyID: keys.apiKeyID, issuerID: keys.apiIssuerID, privateKeyPath: apiKeyURL.path)
        app.catalogPath = options.catalog
        app.grantsPath = options.grants
        app.retention = options.retention
        app.stripe = options.stripe
        // The sandbox's testers consent: a refund request is answered with the ledger's facts.
        app.consumption = ConsumptionPolicy(customersConsented: true, declineWhenUsed: true, grantWithinDays: 14)
        app.transferPolicy = options.transferPolicy
        app.revocation = options.revocation
        app.extraRootPaths = [caDirectory.appendingPathComponent(SandboxCertificateAuthority.FileName.root).path]
        app.endpoints.verifyReceiptProduction = URL(string: "\(sandboxBase)/production/verifyReceipt")!
        app.endpoints.verifyReceiptSandbox = URL(string: "\(sandboxBase)/verifyReceipt")!
        app.endpoints.serverAPIProduction = URL(string: sandboxBase)!
        app.endpoints.serverAPISandbox = URL(string: sandboxBase)!
        var server = ServerConfiguration(
            database: options.database ?? "sqlite:" + data.appendingPathComponent(Files.ledger).path,
            serverKeyPath: data.appendingPathComponent(Files.serverKey).path,
            keys: .init(publishable: keys.publicKey, secret: keys.secretKey), apps: [app])
        server.listen = .init(host: options.host, port: options.port)
        server.webhooks = options.webhooks
        server.clawbackPolicy = options.clawbackPolicy
        server.logFormat = options.logFormat
        server.logLevel = "warning"
        server.reconcileIntervalSeconds = options.reconcileIntervalSeconds
        server.appleRequestIntervalSeconds = 5
        server.dashboard.adminPassword = options.adminPassword
        // A development server over plain HTTP on localhost: Secure cookies would not come back.
        server.dashboard.secureCookies = false
        server.rateLimits.enabled = options.rateLimits
        return ServeEnvironment(options: options, keys: keys, sandbox: sandbox, server: server)
    }

    /// What the purchase server is built with under `kakin serve`: the ledger's clock is the
    /// sandbox's (moving the sandbox clock moves entitlements, grace periods, trial conversion and
    /// cohorts with it), while what other parties check against real time (certificate chains and
    /// their revocation answers, the App Store Server API's bearer tokens, customer tokens,
    /// webhook signatures) keeps the real clock; the dashboard drives the embedded sandbox.
    func serverDependencies() -> ServerDependencies {
        var dependencies = ServerDependencies()
        let clock = sandbox.engine.clock
        dependencies.now = { clock.now() }
        dependencies.realNow = { Date() }
        dependencies.addDashboard(
            sandbox: EngineSandboxControl(engine: sandbox.engine), sandboxApp: options.bundleID)
        return dependencies
    }

    static func loadOrMakeKeys(in data: URL) throws -> Keys {
        let url = data.appendingPathComponent(Files.keys)
        if let existing = existingKeys(url) { return existing }
        func random(_ prefix: String) -> String {
            prefix
                + SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }.map { String(format: "%02x", $0) }.joined()
        }
        let keys = Keys(
            publicKey: random("pk_"), secretKey: random("sk_"), sharedSecret: random(""),
            apiKeyID: String(random("").prefix(10)).uppercased(), apiIssuerID: UUID().uuidString.lowercased())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try OwnerOnlyFiles.write(try encoder.encode(keys), to: url)
        return keys
    }

    static func loadOrMakeKey(_ url: URL) throws -> P256.Signing.PrivateKey {
        if let key = existingKey(url) { return key }
        let key = P256.Signing.PrivateKey()
        try OwnerOnlyFiles.write(Data((key.pemRepresentation + "\n").utf8), to: url)
        return key
    }

    /// The keys a start wrote to `url` (`keys.json`), if it holds them.
    static func existingKeys(_ url: URL) -> Keys? {
        try? JSONDecoder().decode(Keys.self, from: Data(contentsOf: url))
    }

    /// The P-256 key a start wrote to `url` (PEM), if it holds one.
    static func existingKey(_ url: URL) -> P256.Signing.PrivateKey? {
        (try? String(contentsOf: url, encoding: .utf8)).flatMap { try? P256.Signing.PrivateKey(pemRepresentation: $0) }
    }
}
