public import Crypto
public import Foundation
import KakinCore
public import Observation
import KakinWire

/// Everything an app needs from Kakin, made by one call and owned by the app (there is no hidden
/// singleton): the session with its durable outbox, the server client, the payment manager, and
/// the state a SwiftUI view reads without `await`.
///
/// ```swift
/// let store = try await KakinStore.configure(
///     .init(serverURL: URL(string: "https://iap.example.com")!, bundleID: "com.example.kakin",
///           publishableKey: "pk_…", serverKey: pinnedServerKey),
///     backend: StoreKitBackend())
/// await store.loadProducts(["com.example.kakin.removeAd"])
/// let outcome = try await store.purchase(store.products[0])
/// if store.customerInfo?.isEntitled(to: "removeAds") == true { hideAds() }
/// // When the user signs in, what they bought before moves to their account:
/// try await store.logIn(account.id)
/// ```
///
/// Without an app user ID the store buys for an anonymous customer, whose ID
/// (`$kakin_anon_…`) the device keeps across launches; ``logIn(_:)`` moves that customer's
/// purchases and balances to the signed-in user, and ``logOut()`` starts a new anonymous customer.
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
        /// The signed-in user, to whom purchases are attributed; `nil` (the default) for the
        /// customer the device knows: the user last logged in with ``KakinStore/logIn(_:)``, or
        /// an anonymous customer (`$kakin_anon_…`) made on the first launch and kept in
        /// ``storageDirectory`` from then on.
        public var appUserID: String?
        /// Where the outbox and the offline state live.
        public var storageDirectory: URL
        /// How long entitlements computed on the device last while the server cannot be reached.
        public var offlineGracePeriod: TimeInterval
        /// How requests reach the server.
        public var transport: any KakinTransport
        /// Where customer tokens come from, for a server that requires them (the recommended
        /// production setting; see <doc:Identity>): called with a signed-in user's ID, it returns a
        /// token the app's own backend signed for that user. Never called for anonymous customers.
        /// `nil` (the default) sends none.
        public var customerToken: CustomerTokenProvider?
        /// Hosted content to download before a transaction is finished, from the first delivery
        /// of the launch on: a purchase an earlier launch left unfinished gets its content too.
        /// `nil` (the default) downloads nothing (``PaymentManager/enableDownloads(_:request:)``
        /// can still turn it on later, for what is delivered from then on).
        public var hostedContent: HostedContent?
        /// The App Store storefronts (ISO 3166-1 alpha-3 country codes, as StoreKit's
        /// `Storefront.countryCode`) where the app offers purchases on the web
        /// (``KakinStore/webCheckoutLink(for:returnURL:)``); elsewhere they are refused on the device.
        /// The United States (`["USA"]`) by default, where Apple's guidelines let an app link to
        /// its own web purchases; empty turns web purchases off. See <doc:WebPurchases>.
        public var webPurchaseStorefronts: Set<String>

        /// Creates a configuration; the defaults suit an app.
        public init(
            serverURL: URL, bundleID: String, publishableKey: String, serverKey: P256.Signing.PublicKey?,
            appUserID: String? = nil, storageDirectory: URL = PaymentManager.defaultDirectory,
            offlineGracePeriod: TimeInterval = OfflineEntitlements.defaultGracePeriod,
            transport: any KakinTransport = URLSessionTransport(), customerToken: CustomerTokenProvider? = nil,
            hostedContent: HostedContent? = nil, webPurchaseStorefronts: Set<String> = ["USA"]
        ) {
            self.webPurchaseStorefronts = webPurchaseStorefronts
            self.serverURL = serverURL
            self.bundleID = bundleID
            self.publishableKey = publishableKey
            self.serverKey = serverKey
            self.appUserID = appUserID
            self.storageDirectory = storageDirectory
            self.offlineGracePeriod = offlineGracePeriod
            self.transport = transport
            self.customerToken = customerToken
            self.hostedContent = hostedContent
        }
    }

    /// Which transactions come with content, where it is downloaded to, and where from.
    public struct HostedContent: Sendable {
        /// Downloads, checks and unpacks the packages.
        public var downloads: DownloadManager
        /// The content to download for a transaction acknowledged for an app user, or `nil` when
        /// its product has none; asked again at each attempt. What it throws fails the attempt,
        /// which is retried with the outbox's backoff.
        public var request:
            @Sendable (_ transaction: StoreTransaction, _ appUserID: String, _ server: KakinServerClient) async throws
                -> ContentRequest?

        /// Content named by `request`, downloaded by `downloads`.
        public init(
            downloads: DownloadManager,
            request: @escaping @Sendable (_ transaction: StoreTransaction, _ appUserID: String, _ server: KakinServerClient)
                async throws -> ContentRequest?
        ) {
            self.downloads = downloads
            self.request = request
        }

        /// The content your purchase server hosts for the products `productIDs`, asked for the
        /// app user each transaction was delivered for (with that user's customer token, when the
        /// server requires them).
        public static func purchaseServer(_ downloads: DownloadManager, productIDs: Set<String>) -> HostedContent {
            HostedContent(downloads: downloads) { transaction, appUserID, server in
                guard productIDs.contains(transaction.productID) else { return nil }
                let (url, headers) = try await server.contentRequest(productID: transaction.productID, appUserID: appUserID)
                return ContentRequest(
                    productID: transaction.productID, url: url, headers: headers, transactionID: transaction.id)
            }
        }
    }

    /// The session: the store's one observer and the durable outbox.
    @ObservationIgnored public let session: StoreSession
    /// Buys, restores and reports statuses (the delegate API lives here too).
    @ObservationIgnored public let payments: PaymentManager
    /// The purchase server.
    @ObservationIgnored public let server: KakinServerClient
    /// Where the device keeps its customer's ID between launches; `nil` when the app keeps it.
    @ObservationIgnored private let identity: DeviceIdentity?
    /// The App Store storefronts (ISO 3166-1 alpha-3) where the app offers purchases on the web
    /// (``Configuration/webPurchaseStorefronts``).
    @ObservationIgnored public let webPurchaseStorefronts: Set<String>

    /// The customer purchases are attributed to now: the configured user, an anonymous customer
    /// (`$kakin_anon_…`), or the user of the last ``logIn(_:)``.
    public private(set) var appUserID: String
    /// Whether ``appUserID`` is an anonymous customer the SDK made (no one has logged in).
    public var isAnonymous: Bool { AnonymousAppUserID.isAnonymous(appUserID) }

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
    /// (what earlier runs left unfinished is sent now), and reads the customer once. Without an
    /// app user ID in `configuration`, the customer is the one the storage directory keeps (see
    /// ``Configuration/appUserID``).
    public static func configure(_ configuration: Configuration, backend: any StoreBackend) async throws -> KakinStore {
        let identity = DeviceIdentity(directory: configuration.storageDirectory)
        let appUserID = try configuration.appUserID ?? identity.current()
        let server = KakinServerClient(
            baseURL: configuration.serverURL, bundleID: configuration.bundleID,
            publishableKey: configuration.publishableKey, serverKey: configuration.serverKey,
            transport: configuration.transport, customerToken: configuration.customerToken)
        let session = try StoreSession(
            backend: backend, server: server, appUserID: appUserID,
            storageDirectory: configuration.storageDirectory, offlineGracePeriod: configuration.offlineGracePeriod)
        if let hosted = configuration.hostedContent {
            // Before the manager starts the session, which delivers what an earlier launch left.
            await session.setBeforeFinish(
                PaymentManager.downloading(into: hosted.downloads) { transaction, appUserID in
                    try await hosted.request(transaction, appUserID, server)
                })
        }
        let store = KakinStore(
            session: session, payments: await PaymentManager(session: session), server: server, identity: identity,
            webPurchaseStorefronts: configuration.webPurchaseStorefronts)
        await store.listen()
        await store.refreshCustomerInfo()
        return store
    }

    /// A store over a session and manager the app made itself. With an `identity`, ``logIn(_:)``
    /// and ``logOut()`` keep the device's customer in its directory; `webPurchaseStorefronts` are
    /// the storefronts where the app offers web purchases (see
    /// ``Configuration/webPurchaseStorefronts``).
    public init(
        session: StoreSession, payments: PaymentManager, server: KakinServerClient, identity: DeviceIdentity? = nil,
        webPurchaseStorefronts: Set<String> = ["USA"]
    ) {
        self.webPurchaseStorefronts = webPurchaseStorefronts
        self.session = session
        self.payments = payments
        self.server = server
        self.identity = identity
        self.appUserID = payments.appUserID
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
        return try await keepingFailure {
            let outcome = try await payments.purchase(product, offer: offer, quantity: quantity)
            if case .purchased(_, let customer?) = outcome { publish(customer) }
            return outcome
        }
    }

    /// Shows the App Store's offer code redemption sheet and delivers what the customer redeemed,
    /// as ``purchase(_:quantity:)`` delivers a purchase; ``customerInfo`` becomes the server's
    /// answer. Before iOS 27 StoreKit's sheet says nothing of what happened: the outcome is
    /// ``OfferCodeRedemptionOutcome/closed``, the customer is read again, and a redeemed code
    /// arrives through the store's updates (the store then reads the customer by itself).
    ///
    /// The backend shows the sheet: `StoreKitBackend(confirmIn:)` in the app's window scene on iOS
    /// and visionOS, `StoreKitBackend(presentingIn:)` on a window on macOS. A failure is thrown as a
    /// ``PaymentError`` (also kept in ``lastError``): the store's refusal of the code (a code used
    /// before is ``PaymentError/ineligibleForOffer``), or ``PaymentError/unknown(_:)`` saying what is
    /// missing when the backend has no scene or window to show the sheet in.
    @discardableResult
    public func redeemOfferCode() async throws(PaymentError) -> OfferCodeRedemptionOutcome {
        lastError = nil
        let outcome = try await keepingFailure { try await payments.redeemOfferCode() }
        switch outcome {
        case .redeemed(_, let customer?): publish(customer)
        case .closed: await refreshCustomerInfo()
        case .redeemed, .cancelled: break
        }
        return outcome
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
        return try await keepingFailure {
            let customer = try await payments.customerInfo()
            publish(customer)
            return customer
        }
    }

    /// Identifies the customer as `appUserID` (your app's ID of the user who signed in) and returns
    /// that customer, also in ``customerInfo``.
    ///
    /// From an anonymous customer, the server moves everything the anonymous customer bought
    /// (purchases, currency balances) to `appUserID`, in one database transaction, following the
    /// server's transfer policy for purchases another signed-in user already owns; transactions
    /// still queued on the device for the anonymous customer are sent first, and any the server
    /// receives later reach `appUserID` too. From another signed-in user, the store simply
    /// switches: nothing moves between two identified customers. Logging in as the current user
    /// changes nothing and returns the customer.
    ///
    /// Purchases from then on are attributed to `appUserID`, and the device keeps it across
    /// launches. The server must be reachable: when it is not, nothing changes and
    /// ``PaymentError/network`` is thrown. An empty or anonymous (`$kakin_anon_…`) ID is refused
    /// before anything is sent, with ``PaymentError/invalidAppUserID(_:)``; a refusal of the server
    /// comes as ``PaymentError/serverRejected(_:)`` with the server's code (`conflict` when the
    /// anonymous customer became another user before). Where the server requires customer tokens,
    /// the log-in carries `appUserID`'s token from ``Configuration/customerToken``, and
    /// ``PaymentError/unauthorized(_:)`` is thrown when none passes. Failures are kept in
    /// ``lastError`` too.
    @discardableResult
    public func logIn(_ appUserID: String) async throws(PaymentError) -> CustomerInfo {
        lastError = nil
        let former = self.appUserID
        return try await keepingFailure {
            guard !appUserID.isEmpty, !AnonymousAppUserID.isAnonymous(appUserID) else {
                throw PaymentError.invalidAppUserID(appUserID)
            }
            let customer: CustomerInfo
            if appUserID == former {
                customer = try await payments.customerInfo()
                publish(customer)
                return customer
            }
            if isAnonymous {
                // What is queued for the anonymous customer reaches the server first and moves with the rest.
                await payments.deliverPending()
                customer = try await server.logIn(anonymousID: former, as: appUserID)
                await session.identify(appUserID, succeeding: former)
            } else {
                customer = try await session.customer(appUserID: appUserID, allowOffline: false)
                await session.identify(appUserID, succeeding: nil)
            }
            try await become(appUserID)
            customerInfo = nil
            publish(customer)
            return customer
        }
    }

    /// Forgets the signed-in user: the store continues with a new anonymous customer, kept on the
    /// device from then on, and returns that customer (read from the server, or computed on the
    /// device while it cannot be reached). Nothing moves: what the signed-in user bought stays
    /// theirs, and the next ``logIn(_:)`` finds it.
    ///
    /// Refused with ``PaymentError/notLoggedIn`` when the customer is anonymous already (nobody is
    /// logged in), and nothing changes.
    @discardableResult
    public func logOut() async throws(PaymentError) -> CustomerInfo {
        lastError = nil
        return try await keepingFailure {
            guard !isAnonymous else { throw PaymentError.notLoggedIn }
            let anonymous = AnonymousAppUserID.make()
            await session.identify(anonymous, succeeding: nil)
            try await become(anonymous)
            customerInfo = nil
            let customer = try await payments.customerInfo()
            publish(customer)
            return customer
        }
    }

    /// Runs `operation`; a failure is kept in ``lastError`` and thrown as a ``PaymentError``.
    private func keepingFailure<Value>(_ operation: () async throws -> Value) async throws(PaymentError) -> Value {
        do {
            return try await operation()
        } catch {
            let failure = PaymentError(error)
            lastError = failure
            throw failure
        }
    }

    /// Attributes purchases to `appUserID` from now on and keeps it on the device.
    private func become(_ appUserID: String) async throws {
        try identity?.save(appUserID)
        await payments.switchUser(to: appUserID)
        self.appUserID = appUserID
    }

    /// Reads the customer again (from the device while the server cannot be reached). An answer
    /// that arrives after a log-in or log-out changed the customer is another customer's: it is
    /// dropped, so it never replaces the customer that the log-in or log-out published.
    public func refreshCustomerInfo() async {
        let asked = appUserID
        do {
            let customer = try await payments.customerInfo()
            guard appUserID == asked else { return }
            publish(customer)
        } catch {
            guard appUserID == asked else { return }
            lastError = PaymentError(error)
        }
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

    func publish(_ customer: CustomerInfo) {
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
