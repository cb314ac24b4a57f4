import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Kakin
import KakinServer
import KakinLedger
import KakinTestSupport
import StoreSandbox

/// A sandbox App Store and a purchase server, both listening on loopback (port 0), wired like
/// `kakin serve`, for end-to-end tests of the SDK.
struct LiveStack {
    static let bundleID = ExampleApp.bundleID
    static let examples = ExampleApp.catalogDirectory
    static let authority = try! SandboxCertificateAuthority.generate()

    let engine: SandboxEngine
    let sandbox: SandboxService
    let store: any LedgerStore
    let server: KakinServerHTTP
    let serverKey = P256.Signing.PrivateKey()
    /// The app's In-App Purchase key: the server signs offers with it, the sandbox checks them.
    static let offerKey = P256.Signing.PrivateKey()
    static let offerKeyID = "OFFERKEY01"
    static let issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    let directory: URL

    /// `clock` is the sandbox's and the server's: a test that moves it moves both.
    init(clock: SandboxClock = SandboxClock()) async throws {
        let catalog = try ExampleApp.catalog()
        engine = try ExampleSandbox.engine(catalog: catalog, authority: Self.authority, clock: clock)
        sandbox = SandboxService(
            engine: engine, catalog: catalog,
            configuration: .init(
                apiKeys: [.init(keyID: Self.offerKeyID, issuerID: Self.issuerID, publicKey: Self.offerKey.publicKey)]))
        store = try SQLiteLedger(path: nil)
        try await store.migrate()
        let grants = try GrantsCatalog.load(
            from: Data(contentsOf: Self.examples.appendingPathComponent("Kakin.grants.json")))
        let service = PurchaseService(
            store: store,
            apps: [
                AppConfiguration(
                    bundleID: Self.bundleID, appAppleID: ExampleApp.appAppleID, environments: [.sandbox],
                    sandboxRoots: [Self.authority.root], publicKey: "pk_test", secretKey: "sk_test",
                    catalog: try StoreKitConfiguration.load(
                        from: Data(contentsOf: Self.examples.appendingPathComponent("Kakin.storekit"))),
                    serverAPI: ServerAPIAccess(
                        baseURL: URL(string: "http://127.0.0.1:9")!, keyID: Self.offerKeyID, issuerID: Self.issuerID,
                        privateKey: Self.offerKey),
                    offers: OfferPolicy(rules: ["com.example.kakin.premium.monthly.comeback": .lapsedSubscribers]))
            ], grants: grants, now: { clock.now() })
        server = KakinServerHTTP(service: service, signingKey: serverKey)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-sdk-\(UUID().uuidString)")
    }

    /// Runs `body` with both services listening; passes their base URLs.
    func run(_ body: @escaping @Sendable (_ sandboxURL: URL, _ serverURL: URL) async throws -> Void) async throws {
        let sandboxApp = Application(
            router: sandbox.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        let serverApp = Application(
            router: server.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await sandboxApp.test(.live) { sandboxClient in
            try await serverApp.test(.live) { serverClient in
                try await body(
                    URL(string: "http://127.0.0.1:\(sandboxClient.port!)")!,
                    URL(string: "http://127.0.0.1:\(serverClient.port!)")!)
            }
        }
        try? await store.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    func client(_ serverURL: URL) -> KakinServerClient {
        KakinServerClient(
            baseURL: serverURL, bundleID: Self.bundleID, publishableKey: "pk_test", serverKey: serverKey.publicKey)
    }
}

/// Waits for the first status matching `predicate`, with no sleeping: the stream ends the wait.
func firstStatus(
    in stream: AsyncStream<PaymentStatus>, where predicate: @escaping (PaymentStatus) -> Bool
) async -> PaymentStatus? {
    for await status in stream where predicate(status) { return status }
    return nil
}
