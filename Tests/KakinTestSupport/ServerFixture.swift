import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinServer
import KakinLedger
import StoreSandbox
import Testing

/// A server on an in-memory (or file) SQLite ledger, wired to an in-process sandbox App Store
/// selling the example catalog as the example app (``ExampleApp``).
public struct ServerFixture: Sendable {
    /// When the fixture's clock starts.
    public static let start = Date(timeIntervalSince1970: 1_790_000_000)
    /// The certificate authority of the sandbox, which the server trusts.
    public static let authority = try! SandboxCertificateAuthority.generate(now: start)
    /// The bundle ID of the one app the server serves.
    public static let bundleID = ExampleApp.bundleID
    /// `Examples/Catalog`, where the catalog and the grants come from.
    public static let catalogFile = ExampleApp.catalogDirectory

    /// The sandbox's and the server's clock, manual: a test that moves it moves both.
    public let clock: SandboxClock
    /// The sandbox App Store.
    public let engine: SandboxEngine
    /// The server's ledger.
    public let store: any LedgerStore
    /// The server's purchase service over the ledger.
    public let service: PurchaseService
    /// The server's HTTP API.
    public let http: KakinServerHTTP
    /// The key the server signs its answers with.
    public let serverKey = P256.Signing.PrivateKey()
    /// How the server was configured, for a server restarted over another ledger.
    private let policy: ClawbackPolicy
    private let receipts: (any VerifyReceiptClient)?
    private let transferPolicy: TransferPolicy

    /// A server on a ledger at `path` (in memory when nil) with these policies; verifyReceipt is
    /// answered by `receipts`, or by the sandbox in-process.
    public init(
        path: String? = nil, policy: ClawbackPolicy = .clampAtZero, receipts: (any VerifyReceiptClient)? = nil,
        transferPolicy: TransferPolicy = .keepWithOriginal
    ) async throws {
        let clock = SandboxClock.manual(at: Self.start)
        let engine = try ExampleSandbox.engine(catalog: ExampleApp.catalog(), authority: Self.authority, clock: clock)
        let store = try SQLiteLedger(path: path)
        try await store.migrate()
        try self.init(
            clock: clock, engine: engine, store: store, policy: policy, receipts: receipts,
            transferPolicy: transferPolicy)
    }

    /// A server on `store`, any engine (migrated here if it is not yet), wired to a sandbox selling
    /// `catalog` (the example catalog when nil), with these policies.
    public init(
        store: any LedgerStore, catalog: SandboxCatalog? = nil, policy: ClawbackPolicy = .clampAtZero,
        receipts: (any VerifyReceiptClient)? = nil, transferPolicy: TransferPolicy = .keepWithOriginal
    ) async throws {
        let clock = SandboxClock.manual(at: Self.start)
        let engine = try ExampleSandbox.engine(
            catalog: catalog ?? ExampleApp.catalog(), authority: Self.authority, clock: clock)
        try await store.migrate()
        try self.init(
            clock: clock, engine: engine, store: store, policy: policy, receipts: receipts,
            transferPolicy: transferPolicy)
    }

    private init(
        clock: SandboxClock, engine: SandboxEngine, store: any LedgerStore, policy: ClawbackPolicy,
        receipts: (any VerifyReceiptClient)?, transferPolicy: TransferPolicy
    ) throws {
        self.clock = clock
        self.engine = engine
        self.store = store
        self.policy = policy
        self.receipts = receipts
        self.transferPolicy = transferPolicy
        service = PurchaseService.example(
            store: store, root: Self.authority.root, grants: try ExampleApp.grants(), clawbackPolicy: policy,
            verifyReceiptClient: receipts ?? EngineVerifyReceiptClient(engine: engine), now: { clock.now() }
        ) { app in
            app.sharedSecret = "secret"
            app.verifyReceiptProductionURL = URL(string: "http://sandbox.invalid/production/verifyReceipt")!
            app.verifyReceiptSandboxURL = URL(string: "http://sandbox.invalid/verifyReceipt")!
            app.transferPolicy = transferPolicy
        }
        http = KakinServerHTTP(service: service, signingKey: serverKey)
    }

    /// The server restarted over `store` (the same ledger opened again, or another one, migrated
    /// here if it is not yet): a new service with the same configuration, the same sandbox and
    /// clock.
    public func restarted(on store: any LedgerStore) async throws -> ServerFixture {
        try await store.migrate()
        return try ServerFixture(
            clock: clock, engine: engine, store: store, policy: policy, receipts: receipts,
            transferPolicy: transferPolicy)
    }

    /// A purchase in the sandbox, signed as the device would receive it.
    public func buy(
        _ product: String, tester: String = "tester", quantity: Int = 1
    ) async throws -> (SandboxTransaction, String) {
        try await engine.buy(product, tester: tester, quantity: quantity, at: clock.now())
    }
}

extension ServerFixture {
    /// Runs `body` with access to this fixture's sandbox serving the App Store Server API over
    /// HTTP on a free port of 127.0.0.1, with a key registered for the server.
    public func withServerAPI(
        rateLimits: SandboxRateLimits? = nil, _ body: @Sendable (ServerAPIAccess) async throws -> Void
    ) async throws {
        let apiKey = P256.Signing.PrivateKey()
        let catalog = try ExampleApp.catalog()
        let sandbox = SandboxService(
            engine: engine, catalog: catalog,
            configuration: .init(
                apiKeys: [.init(keyID: "KEY", issuerID: "issuer", publicKey: apiKey.publicKey)], rateLimits: rateLimits))
        let app = Application(router: sandbox.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            try await body(
                ServerAPIAccess(
                    baseURL: URL(string: "http://127.0.0.1:\(port)")!, keyID: "KEY", issuerID: "issuer",
                    privateKey: apiKey))
        }
    }
}

/// verifyReceipt answered by the sandbox engine in-process: the URL's path says which host.
public struct EngineVerifyReceiptClient: VerifyReceiptClient {
    /// The sandbox that answers.
    public let engine: SandboxEngine

    /// A client answered by `engine`.
    public init(engine: SandboxEngine) { self.engine = engine }

    /// Asks the sandbox to verify `request` as the host of `url` would.
    public func verify(_ request: VerifyReceiptRequest, at url: URL) async throws -> VerifyReceiptResponse {
        await engine.verifyReceipt(
            request, endpoint: url.path.hasPrefix("/production") ? .production : .sandbox, sharedSecret: "secret")
    }
}
