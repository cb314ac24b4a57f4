public import Crypto
public import Foundation
public import Observation

/// Everything an app needs from Kakin, made by one call and owned by the app (there is no hidden
/// singleton): the session with its durable outbox, the server client, the payment manager, and
/// the state a SwiftUI view reads without `await`.
///
/// ```swift
/// let store = try await KakinStore.configure(
///     .init(serverURL: URL(string: "https://iap.example.com")!, bundleID: "com.example.kakin",
///           publishableKey: "pk_…", serverKey: pinnedServerKey, appUserID: userID),
///     backend: StoreKitBackend())
/// await store.loadProducts(["com.example.kakin.removeAd"])
/// let outcome = try await store.purchase(store.products[0])
/// if store.customerInfo?.isEntitled(to: "removeAds") == true { hideAds() }
/// ```
///
/// Every property is observable (`@Observable`) and read on the main actor. What changes them:
/// ``loadProducts(_:)``, ``purchase(_:quantity:)``, ``restore()``, ``refreshCustomerInfo()``, and
/// the transactions the session delivers by itself (renewals, approvals, purchases made on
/// another device), after which the customer is read again. ``customerInfoUpdates()`` streams
/// the current customer and then each new one, for code outside SwiftUI.
@MainActor @Observable
public final class KakinStore {
    /// What ``configure(_:backend:)`` needs.
    public struct Configuration: Sendable {
        /// Your purchase server.
        public var serverURL: URL
        /// The app's bundle ID, as the server knows it.
        public var bundleID: String
        /// The app's publishable key (`pk_…`).
        public var publishableKey: String
        /// The server's public key (`GET /v1/server-key`), pinned in the app: answers it did not
        /// sign are refused. `nil` skips the check (development only).
        public var serverKey: P256.Signing.PublicKey?
        /// The signed-in user, to whom purchases are attributed.
        public var appUserID: String
        /// Where the outbox and the offline state live.
        public var storageDirectory: URL
        /// How long entitlements computed on the device last while the server cannot be reached.
        public var offlineGracePeriod: TimeInterval
        /// How requests reach the server.
        public var transport: any KakinTransport

        /// Creates a configuration; the defaults suit an app.
        public init(
            serverURL: URL, bundleID: String, publishableKey: String, serverKey: P256.Signing.PublicKey?,
            appUserID: String, storageDirectory: URL = PaymentManager.defaultDirectory,
            offlineGracePeriod: TimeInterval = OfflineEntitlements.defaultGracePeriod,
            transport: any KakinTransport = URLSessionTransport()
        ) {
            self.serverURL = serverURL
            self.bundleID = bundleID
            self.publishableKey = publishableKey
            self.serverKey = serverKey
            self.appUserID = appUserID
            self.storageDirectory = storageDirectory
            self.offlineGracePeriod = offlineGracePeriod
            self.transport = transport
        }
    }

    /// The session: the store's one observer and the durable outbox.
    @ObservationIgnored public let session: StoreSession
    /// Buys, restores and reports statuses (the delegate API lives here too).
    @ObservationIgnored public let payments: PaymentManager
    /// The purchase server.
    @ObservationIgnored public let server: KakinServerClient

    /// The customer as last answered: by the server, or, while it cannot be reached, computed on
    /// the device (``CustomerInfo/isProvisional``). `nil` until first read.
    public private(set) var customerInfo: CustomerInfo?
    /// The products last loaded, in the order asked.
    public private(set) var products: [StoreProduct] = []
    /// The IDs the store did not know, from the last load.
    public private(set) var invalidProducts: [InvalidProduct] = []
    /// Whether a purchase or a restore is under way (for disabling buttons).
    public private(set) var isPurchasing = false
    /// The last failure, cleared when the next operation starts.
    public private(set) var lastError: PaymentError?

    @ObservationIgnored private var listeners: [UUID: AsyncStream<CustomerInfo>.Continuation] = [:]
    @ObservationIgnored private var statusTask: Task<Void, Never>?

    /// Builds the session, the server client and the payment manager from `configuration` and
    /// `backend` (`StoreKitBackend()` on a device, `SandboxBackend` in tests), starts delivering
    /// (what earlier runs left unfinished is sent now), and reads the customer once.
    public static func configure(_ configuration: Configuration, backend: any StoreBackend) async throws -> KakinStore {
        let server = KakinServerClient(
            baseURL: configuration.serverURL, bundleID: configuration.bundleID,
            publishableKey: configuration.publishableKey, serverKey: configuration.serverKey,
            transport: configuration.transport)
        let session = try StoreSession(
            backend: backend, server: server, appUserID: configuration.appUserID,
            storageDirectory: configuration.storageDirectory, offlineGracePeriod: configuration.offlineGracePeriod)
        let store = KakinStore(session: session, payments: await PaymentManager(session: session), server: server)
        await store.listen()
        await store.refreshCustomerInfo()
        return store
    }

    /// A store over a session and manager the app made itself.
    public init(session: StoreSession, payments: PaymentManager, server: KakinServerClient) {
        self.session = session
        self.payments = payments
        self.server = server
    }

    /// Loads products (``products``, ``invalidProducts``); a failure lands in ``lastError``.
    public func loadProducts(_ identifiers: [String]) async {
        lastError = nil
        do {
            let (found, invalid) = try await payments.products(for: identifiers)
            let order = Dictionary(uniqueKeysWithValues: identifiers.enumerated().map { ($1, $0) })
            products = found.sorted { (order[$0.id] ?? .max) < (order[$1.id] ?? .max) }
            invalidProducts = invalid
        } catch {
            lastError = PaymentError(error)
        }
    }

    /// Buys `product` (the one the app already has: nothing is fetched again). Paid purchases
    /// are delivered to the server and then finished; ``customerInfo`` becomes the server's answer.
    /// Throws the failure as a ``PaymentError`` (also kept in ``lastError``); a cancel is an outcome.
    @discardableResult
    public func purchase(_ product: StoreProduct, quantity: Int = 1) async throws(PaymentError) -> PurchaseOutcome {
        try await purchase(product, offer: nil, quantity: quantity)
    }

    /// Buys a subscription with one of its offers (``StoreProduct/promotionalOffers``,
    /// ``StoreProduct/winBackOffers`` or its ``StoreProduct/introductoryOffer``): a promotional
    /// offer is signed by the purchase server for this customer first. A refusal (the offer's rule
    /// excludes the customer, the store finds the signature bad) is thrown as a ``PaymentError``.
    @discardableResult
    public func purchase(
        _ product: StoreProduct, offer: SubscriptionOffer?, quantity: Int = 1
    ) async throws(PaymentError) -> PurchaseOutcome {
        lastError = nil
        isPurchasing = true
        defer { isPurchasing = false }
        do {
            let outcome = try await payments.purchase(product, offer: offer, quantity: quantity)
            if case .purchased(_, let customer?) = outcome { publish(customer) }
            return outcome
        } catch {
            let failure = PaymentError(error)
            lastError = failure
            throw failure
        }
    }

    /// Restores non-consumables and subscriptions (StoreKit may ask the customer to sign in), delivers
    /// them to the server, and returns the customer read afterwards (also in ``customerInfo``).
    ///
    /// A customer who cancels the sign-in has restored nothing: that is not a failure, and the
    /// customer as last known is returned. A failure is thrown as a ``PaymentError`` and kept in
    /// ``lastError``.
    @discardableResult
    public func restore() async throws(PaymentError) -> CustomerInfo {
        lastError = nil
        isPurchasing = true
        defer { isPurchasing = false }
        do {
            _ = try await payments.restore()
        } catch {
            let failure = PaymentError(error)
            if failure != .cancelled {
                lastError = failure
                throw failure
            }
        }
        do {
            let customer = try await payments.customerInfo()
            publish(customer)
            return customer
        } catch {
            let failure = PaymentError(error)
            lastError = failure
            throw failure
        }
    }

    /// Reads the customer again (from the device while the server cannot be reached).
    public func refreshCustomerInfo() async {
        do { publish(try await payments.customerInfo()) } catch { lastError = PaymentError(error) }
    }

    /// The current ``customerInfo`` (when there is one yet), then each new one, for code that does not
    /// observe the store: a listener that starts late still begins with what the store knows.
    public func customerInfoUpdates() -> AsyncStream<CustomerInfo> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: CustomerInfo.self)
        if let customerInfo { continuation.yield(customerInfo) }
        listeners[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { @MainActor in self?.listeners[id] = nil }
        }
        return stream
    }

    /// Stops listening and delivering; the store is not used afterwards.
    public func shutdown() async {
        statusTask?.cancel()
        statusTask = nil
        for listener in listeners.values { listener.finish() }
        listeners = [:]
        await payments.shutdown()
    }

    private func publish(_ customer: CustomerInfo) {
        guard customer != customerInfo else { return }
        customerInfo = customer
        for listener in listeners.values { listener.yield(customer) }
    }

    /// Reads the customer again whenever the session delivered something by itself.
    private func listen() async {
        let statuses = await payments.statusUpdates()
        statusTask = Task { [weak self] in
            for await status in statuses {
                switch status {
                case .purchased, .restored:
                    await self?.refreshCustomerInfo()
                default: break
                }
            }
        }
    }
}
