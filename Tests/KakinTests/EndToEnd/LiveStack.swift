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
import Synchronization
import Testing

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
    /// The sandbox's and the server's clock.
    let clock: SandboxClock

    /// The app's customer-token secret, when the stack requires customer tokens.
    static let customerTokenSecret = "a customer-token secret of at least thirty-two bytes"

    /// `clock` is the sandbox's and the server's: a test that moves it moves both. With
    /// `requiringCustomerTokens`, the app requires a customer token signed with
    /// ``customerTokenSecret`` for every request about an identified customer. `catalogOptions`
    /// changes the example catalog's side file (offer codes, say) for this stack. With `stripe`,
    /// the app sells on the web through that Stripe account.
    init(
        clock: SandboxClock = SandboxClock(), requiringCustomerTokens: Bool = false,
        transferPolicy: TransferPolicy = .keepWithOriginal, stripe: StripeAccount? = nil,
        catalogOptions: @Sendable (inout CatalogOptions) -> Void = { _ in }
    ) async throws {
        self.clock = clock
        var options = try CatalogOptions.load(
            from: Data(contentsOf: CatalogOptions.sideFileURL(for: ExampleApp.storeKitFile)))
        catalogOptions(&options)
        let catalog = try SandboxCatalog.load(storeKitFile: ExampleApp.storeKitFile, options: options)
        engine = try ExampleSandbox.engine(catalog: catalog, authority: Self.authority, clock: clock)
        sandbox = SandboxService(
            engine: engine, catalog: catalog,
            configuration: .init(
                apiKeys: [.init(keyID: Self.offerKeyID, issuerID: Self.issuerID, publicKey: Self.offerKey.publicKey)]))
        store = try SQLiteLedger(path: nil)
        try await store.migrate()
        let storeKit = try StoreKitConfiguration.load(from: Data(contentsOf: ExampleApp.storeKitFile))
        let service = PurchaseService.example(
            store: store, root: Self.authority.root, grants: try ExampleApp.grants(), now: { clock.now() }
        ) { app in
            app.catalog = storeKit
            app.transferPolicy = transferPolicy
            app.serverAPI = ServerAPIAccess(
                baseURL: URL(string: "http://127.0.0.1:9")!, keyID: Self.offerKeyID, issuerID: Self.issuerID,
                privateKey: Self.offerKey)
            app.offers = OfferPolicy(rules: ["com.example.kakin.premium.monthly.comeback": .lapsedSubscribers])
            app.customerTokens =
                requiringCustomerTokens ? CustomerTokenPolicy(secret: Self.customerTokenSecret, required: true) : nil
            app.stripe = stripe
        }
        server = KakinServerHTTP(service: service, signingKey: serverKey)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-sdk-\(UUID().uuidString)")
    }

    /// Runs `body` with both services listening; passes their base URLs.
    func run(_ body: @escaping @Sendable (_ sandboxURL: URL, _ serverURL: URL) async throws -> Void) async throws {
        try await withLiveSandboxAndServer(sandbox: sandbox, server: server) { sandboxPort, serverPort in
            try await body(URL(string: "http://127.0.0.1:\(sandboxPort)")!, URL(string: "http://127.0.0.1:\(serverPort)")!)
        }
        try? await store.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    func client(_ serverURL: URL, customerToken: CustomerTokenProvider? = nil) -> KakinServerClient {
        KakinServerClient(
            baseURL: serverURL, bundleID: Self.bundleID, publishableKey: "pk_test", serverKey: serverKey.publicKey,
            customerToken: customerToken)
    }

    /// Sends the sandbox's due notifications to the server at `notificationURL`; every one must be
    /// accepted.
    @discardableResult
    func deliverNotifications(
        to notificationURL: URL, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [NotificationRecord] {
        let sent = try await engine.deliverDueNotifications(to: notificationURL, using: URLSessionNotificationTransport())
        #expect(
            sent.allSatisfy { $0.attempts.last?.sendAttemptResult == .success }, "\(sent)",
            sourceLocation: sourceLocation)
        return sent
    }

    /// A client of a server address where nothing listens: the server is down.
    func unreachableClient() -> KakinServerClient { client(URL(string: "http://127.0.0.1:1")!) }

    /// The app's backend: signs a customer token for whoever asks, valid for `lifetime` seconds
    /// from the stack's clock, and counts who it signed for.
    final class Backend: Sendable {
        let signed = Mutex<[String]>([])
        let isDown = Mutex(false)
        let lifetime: TimeInterval
        let clock: SandboxClock

        init(_ stack: LiveStack, lifetime: TimeInterval = 900) {
            self.lifetime = lifetime
            clock = stack.clock
        }

        var provider: CustomerTokenProvider {
            { [self] appUserID in
                if isDown.withLock({ $0 }) { throw URLError(.cannotConnectToHost) }
                signed.withLock { $0.append(appUserID) }
                return CustomerToken.mint(
                    appUserID: appUserID, bundleID: LiveStack.bundleID,
                    secret: CustomerTokenPolicy(secret: LiveStack.customerTokenSecret, required: true).secret,
                    lifetime: lifetime, now: clock.now())
            }
        }
    }
}

/// Waits for the first status matching `predicate`, with no sleeping: the stream ends the wait.
func firstStatus(
    in stream: AsyncStream<PaymentStatus>, where predicate: @escaping (PaymentStatus) -> Bool
) async -> PaymentStatus? {
    for await status in stream where predicate(status) { return status }
    return nil
}
