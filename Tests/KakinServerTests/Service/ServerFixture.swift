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

/// A server on an in-memory (or file) SQLite ledger, wired to an in-process sandbox App Store.
struct ServerFixture {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)
    static let authority = try! SandboxCertificateAuthority.generate(now: start)
    static let bundleID = "com.example.kakin"
    static let catalogFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Examples/Catalog")

    let clock = SandboxClock.manual(at: start)
    let engine: SandboxEngine
    let store: SQLLedgerStore
    let service: PurchaseService
    let http: KakinServerHTTP
    let serverKey = P256.Signing.PrivateKey()

    init(
        path: String? = nil, policy: ClawbackPolicy = .clampAtZero, receipts: (any VerifyReceiptClient)? = nil,
        transferPolicy: TransferPolicy = .keepWithOriginal
    ) async throws {
        let catalog = try SandboxCatalog.load(storeKitFile: Self.catalogFile.appendingPathComponent("Kakin.storekit"))
        engine = try SandboxEngine(
            signer: SandboxSigner(authority: Self.authority, bundleID: Self.bundleID, appAppleID: 6_450_000_001),
            clock: clock, storefrontIDs: catalog.storefrontIdentifiers, products: catalog.engineLookup)
        store = try await SQLLedgerStore.sqlite(path: path)
        try await store.migrate()
        let clock = self.clock
        let grants = try GrantsCatalog.load(
            from: Data(contentsOf: Self.catalogFile.appendingPathComponent("Kakin.grants.json")))
        service = PurchaseService(
            store: store,
            apps: [
                AppConfiguration(
                    bundleID: Self.bundleID, appAppleID: 6_450_000_001, environments: [.sandbox],
                    sandboxRoots: [Self.authority.root], publicKey: "pk_test", secretKey: "sk_test",
                    sharedSecret: "secret",
                    verifyReceiptProductionURL: URL(string: "http://sandbox.invalid/production/verifyReceipt")!,
                    verifyReceiptSandboxURL: URL(string: "http://sandbox.invalid/verifyReceipt")!,
                    transferPolicy: transferPolicy)
            ], grants: grants, clawbackPolicy: policy,
            verifyReceiptClient: receipts ?? EngineVerifyReceiptClient(engine: engine), now: { clock.now() })
        http = KakinServerHTTP(service: service, signingKey: serverKey)
    }

    /// A purchase in the sandbox, signed as the device would receive it.
    func buy(
        _ product: String, tester: String = "tester", quantity: Int = 1
    ) async throws -> (SandboxTransaction, String) {
        if (try? await engine.tester(tester)) == nil { _ = try await engine.createTester(name: tester, id: tester) }
        guard
            case .purchased(let transaction) = try await engine.purchase(
                .init(testerID: tester, productID: "com.example.kakin.\(product)", quantity: quantity))
        else { throw ServerError(.invalidRequest, "the sandbox did not sell \(product)") }
        return (transaction, try engine.signer.signTransaction(transaction, at: clock.now()))
    }
}

extension ServerFixture {
    /// Runs `body` with access to this fixture's sandbox serving the App Store Server API over
    /// HTTP on a free port of 127.0.0.1, with a key registered for the server.
    func withServerAPI(_ body: @Sendable (ServerAPIAccess) async throws -> Void) async throws {
        let apiKey = P256.Signing.PrivateKey()
        let catalog = try SandboxCatalog.load(storeKitFile: Self.catalogFile.appendingPathComponent("Kakin.storekit"))
        let sandbox = SandboxService(
            engine: engine, catalog: catalog,
            configuration: .init(apiKeys: [.init(keyID: "KEY", issuerID: "issuer", publicKey: apiKey.publicKey)]))
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
struct EngineVerifyReceiptClient: VerifyReceiptClient {
    let engine: SandboxEngine
    func verify(_ request: VerifyReceiptRequest, at url: URL) async throws -> VerifyReceiptResponse {
        await engine.verifyReceipt(
            request, endpoint: url.path.hasPrefix("/production") ? .production : .sandbox, sharedSecret: "secret")
    }
}
