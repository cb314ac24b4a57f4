import AppStoreModels
import AppStoreSecurity
import Crypto
import Foundation
import KakinServer
import StoreSandbox

/// Everything `kakin serve` runs, made from its options and its data directory: the purchase
/// server and an embedded sandbox App Store wired to each other, as a real backend and the App
/// Store are (verifyReceipt and the App Store Server API point at the sandbox; the sandbox sends
/// its notifications to the server).
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
        var webhooks: [WebhookEndpoint] = []
    }

    /// Keys made on first start and kept in `DATA/keys.json`.
    struct Keys: Codable {
        var publicKey: String
        var secretKey: String
        var sharedSecret: String
        var apiKeyID: String
        var apiIssuerID: String
    }

    let options: Options
    let keys: Keys
    let sandbox: SandboxService
    let server: KakinServerHTTP
    let store: SQLLedgerStore
    let webhooks: WebhookDispatcher

    var serverURL: String { "http://\(options.host):\(options.port)" }
    var sandboxURL: String { "http://\(options.host):\(options.sandboxPort)" }

    static func make(_ options: Options) async throws -> ServeEnvironment {
        let data = URL(fileURLWithPath: options.data)
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let keys = try loadOrMakeKeys(in: data)
        let apiKey = try loadOrMakeKey(data.appendingPathComponent("api-key.p8"))
        let serverKey = try loadOrMakeKey(data.appendingPathComponent("server-key.pem"))

        // The sandbox App Store.
        let sandboxData = data.appendingPathComponent("sandbox")
        let authority = try SandboxCertificateAuthority.loadOrCreate(in: sandboxData.appendingPathComponent("ca"))
        let catalogURL = URL(fileURLWithPath: options.catalog)
        let catalog = try SandboxCatalog.load(storeKitFile: catalogURL)
        let engine = try SandboxEngine(
            signer: SandboxSigner(authority: authority, bundleID: options.bundleID, appAppleID: options.appAppleID),
            clock: SandboxClock(), store: FileStateStore(directory: sandboxData),
            storefrontIDs: catalog.storefrontIdentifiers, products: catalog.engineLookup)
        var settings = await engine.settings
        settings.notificationURL = URL(string: "http://\(options.host):\(options.port)/v1/notifications/apple")
        try await engine.updateSettings(settings)
        let sandbox = SandboxService(
            engine: engine, catalog: catalog,
            configuration: .init(
                sharedSecret: keys.sharedSecret,
                apiKeys: [.init(keyID: keys.apiKeyID, issuerID: keys.apiIssuerID, publicKey: apiKey.publicKey)]))

        // The purchase server.
        let store = try await SQLLedgerStore.sqlite(path: data.appendingPathComponent("kakin.sqlite").path)
        try await store.migrate()
        let grants = try GrantsCatalog.load(from: Data(contentsOf: URL(fileURLWithPath: options.grants)))
        let configuration = try StoreKitConfiguration.load(from: Data(contentsOf: catalogURL))
        let sandboxBase = "http://\(options.host):\(options.sandboxPort)"
        let app = AppConfiguration(
            bundleID: options.bundleID, appAppleID: options.appAppleID, environments: [.sandbox],
            sandboxRoots: [authority.root], publicKey: keys.publicKey, secretKey: keys.secretKey,
            sharedSecret: keys.sharedSecret,
            verifyReceiptProductionURL: URL(string: "\(sandboxBase)/production/verifyReceipt")!,
            verifyReceiptSandboxURL: URL(string: "\(sandboxBase)/verifyReceipt")!)
        let service = PurchaseService(
            store: store, apps: [app], grants: grants, productTypes: Self.productTypes(configuration),
            clawbackPolicy: options.clawbackPolicy)
        let reconciler = Reconciler(
            service: service,
            access: [
                options.bundleID: ServerAPIAccess(
                    baseURL: URL(string: sandboxBase)!, keyID: keys.apiKeyID, issuerID: keys.apiIssuerID,
                    privateKey: apiKey)
            ])
        let server = KakinServerHTTP(
            service: service, signingKey: serverKey, reconciler: reconciler, catalog: configuration)
        return ServeEnvironment(
            options: options, keys: keys, sandbox: sandbox, server: server, store: store,
            webhooks: WebhookDispatcher(store: store, endpoints: options.webhooks))
    }

    /// Product types from the `.storekit` file, for receipt-derived transactions.
    static func productTypes(_ configuration: StoreKitConfiguration) -> [String: ProductType] {
        var types: [String: ProductType] = [:]
        for product in (configuration.products ?? []) + (configuration.nonRenewingSubscriptions ?? []) {
            guard let id = product.productID else { continue }
            switch product.type {
            case .consumable: types[id] = .consumable
            case .nonRenewingSubscription: types[id] = .nonRenewingSubscription
            default: types[id] = .nonConsumable
            }
        }
        for subscription in configuration.allSubscriptions {
            if let id = subscription.productID { types[id] = .autoRenewableSubscription }
        }
        return types
    }

    static func loadOrMakeKeys(in data: URL) throws -> Keys {
        let url = data.appendingPathComponent("keys.json")
        if let existing = try? JSONDecoder().decode(Keys.self, from: Data(contentsOf: url)) { return existing }
        func random(_ prefix: String) -> String {
            prefix
                + SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }.map { String(format: "%02x", $0) }.joined()
        }
        let keys = Keys(
            publicKey: random("pk_"), secretKey: random("sk_"), sharedSecret: random(""),
            apiKeyID: String(random("").prefix(10)).uppercased(), apiIssuerID: UUID().uuidString.lowercased())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(keys).write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        return keys
    }

    static func loadOrMakeKey(_ url: URL) throws -> P256.Signing.PrivateKey {
        if let text = try? String(contentsOf: url, encoding: .utf8),
            let key = try? P256.Signing.PrivateKey(pemRepresentation: text)
        {
            return key
        }
        let key = P256.Signing.PrivateKey()
        try Data((key.pemRepresentation + "\n").utf8).write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        return key
    }
}
