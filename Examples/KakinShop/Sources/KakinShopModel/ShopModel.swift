public import Foundation
public import Kakin
public import Observation

/// The shop's state and what its screens ask of it, over the SDK's ``KakinStore``.
///
/// Everything the customer owns is decided by the purchase server and read from the store
/// (`store.customerInfo`); the model only arranges it for the screens (``paywall``, ``banner``,
/// ``contentItems``) and turns taps into SDK calls, keeping the last outcome in ``notice``. The
/// store is `@Observable`, so a view that reads ``paywall`` or ``banner`` follows the store too.
///
/// ```swift
/// let model = ShopModel()
/// await model.configure(ShopConfiguration(store: .init(
///     serverURL: serverURL, bundleID: "com.example.kakin", publishableKey: "pk_…", serverKey: pinnedKey)),
///     backend: StoreKitBackend())
/// if let monthly = model.paywall.subscriptions.first { await model.purchase(monthly.product) }
/// ```
@MainActor @Observable
public final class ShopModel {
    /// Where the shop stands.
    public enum Phase: Hashable, Sendable {
        /// ``configure(_:backend:)`` has not been called.
        case notConfigured
        /// The store is being set up: the outbox opened, what earlier runs left delivered, the
        /// customer read, the products loaded.
        case configuring
        /// The shop is open.
        case ready
        /// The store cannot be used with this configuration (a storage folder that cannot be opened,
        /// say), with the reason.
        case unavailable(String)
    }

    /// Where the shop stands.
    public private(set) var phase: Phase = .notConfigured
    /// The SDK's store, once configured: products, the customer, purchase state.
    public private(set) var store: KakinStore?
    /// What the last action came to, for a one-line message; ``dismissNotice()`` clears it.
    public private(set) var notice: ShopNotice?
    /// Whether a log-in, log-out, catalog load or download request is under way (a purchase or a
    /// restore is `store.isPurchasing`).
    public internal(set) var isWorking = false
    /// Products whose content the purchase server hosts (their catalog grants `content`).
    public private(set) var contentProductIDs: Set<String> = []
    /// The latest snapshot of each product's content download, by product ID.
    public internal(set) var downloads: [String: ContentDownload] = [:]
    /// Where each product's unpacked content is on this device, by product ID.
    public internal(set) var installedContent: [String: URL] = [:]
    /// The intent to show the App Store's manage-subscriptions sheet; the view presents it
    /// (`manageSubscriptionsSheet` on iOS, ``ShopModel/manageSubscriptionsURL`` on macOS) and
    /// sets it back to `false` when it closes.
    public var isManagingSubscriptions = false
    /// The intent to show the App Store's offer code redemption sheet; the view presents it
    /// (`offerCodeRedemption(isPresented:onCompletion:)`) and reports how it ended with
    /// ``offerCodeRedemptionFinished(_:)``.
    public var isRedeemingOfferCode = false

    /// Downloads hosted content before a purchase is finished; `nil` until configured.
    @ObservationIgnored public internal(set) var downloadManager: DownloadManager?
    @ObservationIgnored private(set) var configuration: ShopConfiguration?
    @ObservationIgnored private let now: @Sendable () -> Date
    @ObservationIgnored var downloadEvents: Task<Void, Never>?

    /// A model that is not configured yet. `now` is the clock the banner and ownership are read at;
    /// tests pass the sandbox App Store's clock.
    public init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    // MARK: Configuring

    /// Configures the SDK with `configuration` and `backend` (`StoreKitBackend()` on a device,
    /// `SandboxBackend` against Kakin's sandbox App Store), connects hosted content downloads,
    /// reads the server's catalog and loads the products. A configuration the SDK refuses leaves
    /// the shop ``Phase/unavailable(_:)``; an unreachable server does not: the store starts with
    /// what the device knows and ``notice`` says why the products are missing.
    public func configure(_ configuration: ShopConfiguration, backend: any StoreBackend) async {
        await shutdown()
        phase = .configuring
        self.configuration = configuration
        // The downloads are named in the store's configuration, so that a purchase an earlier
        // launch left unacknowledged gets its content in the launch's first delivery too.
        let manager = DownloadManager(
            directory: configuration.contentDirectory, chunkSize: configuration.contentChunkSize)
        var storeConfiguration = configuration.store
        storeConfiguration.hostedContent = hostedContent(manager, locale: configuration.catalogLocale)
        let store: KakinStore
        do {
            store = try await KakinStore.configure(storeConfiguration, backend: backend)
        } catch {
            phase = .unavailable("\(error)")
            return
        }
        self.store = store
        await followDownloads(manager)
        await loadProducts()
        phase = .ready
    }

    /// Reads the server's catalog (unless the configuration names the products), learns which
    /// products carry content, and loads the products from the store, localized for the
    /// customer's storefront. Also what a pull to refresh does, and what runs after a
    /// subscription changed, since offer eligibility changes with it.
    public func loadProducts() async {
        guard let store, let configuration else { return }
        isWorking = true
        defer { isWorking = false }
        var identifiers = configuration.productIDs ?? []
        do {
            // The session learns from the catalog which entitlement each product unlocks, for
            // offline entitlements before any purchase was answered.
            let catalog = try await store.session.refreshCatalog(locale: configuration.catalogLocale)
            contentProductIDs = Self.contentProducts(of: catalog)
            if configuration.productIDs == nil { identifiers = catalog.products.map(\.productId) }
        } catch {
            if configuration.productIDs == nil {
                notice = .failed(PaymentError(error))
                return
            }
        }
        await store.loadProducts(identifiers)
        if let error = store.lastError { notice = .failed(error) }
        await refreshInstalledContent()
    }

    /// Reads the customer again, as when the app comes to the foreground: changes the App Store
    /// tells the server about (a renewal, a billing problem, a cancellation) show after this.
    public func refresh() async {
        await store?.refreshCustomerInfo()
    }

    /// Stops the store and its downloads' observer; ``configure(_:backend:)`` starts anew.
    public func shutdown() async {
        downloadEvents?.cancel()
        downloadEvents = nil
        if let store { await store.shutdown() }
        store = nil
        downloadManager = nil
        phase = .notConfigured
    }

    /// Clears ``notice``.
    public func dismissNotice() {
        notice = nil
    }

    func report(_ notice: ShopNotice?) {
        self.notice = notice
    }

    // MARK: What the screens read

    /// The customer as the server last answered (or as the device computed it while the server
    /// could not be reached).
    public var customer: CustomerInfo? { store?.customerInfo }

    /// The paywall: the loaded products in sections, with what the customer owns and the offers
    /// they may take.
    public var paywall: Paywall {
        Paywall(
            products: store?.products ?? [], customer: store?.customerInfo, contentProductIDs: contentProductIDs,
            at: now())
    }

    /// IDs the store did not recognise in the last load, with its reasons (a product not cleared
    /// for sale, a bundle ID mismatch): for the developer, below the paywall.
    public var invalidProducts: [InvalidProduct] { store?.invalidProducts ?? [] }

    /// The subscription's state, for the banner at the top of the shop.
    public var banner: SubscriptionBanner {
        SubscriptionBanner(
            customer: store?.customerInfo, entitlement: configuration?.subscriptionEntitlement ?? "premium",
            at: now())
    }

    /// Whether the customer has `entitlement` now (`removeAds`, `premium`): what the app unlocks.
    public func isEntitled(to entitlement: String) -> Bool {
        store?.customerInfo?.isEntitled(to: entitlement, at: now()) ?? false
    }

    /// The customer's balances by currency (`points`, `credits`).
    public var balances: [String: Int64] { store?.customerInfo?.balances ?? [:] }

    /// The customer purchases are attributed to: anonymous (`$kakin_anon_…`) until someone logs in.
    public var appUserID: String? { store?.appUserID }

    /// Whether nobody is logged in.
    public var isAnonymous: Bool { store?.isAnonymous ?? true }

    /// The subscription group of the subscription the banner is about, for the App Store's sheet.
    public var subscriptionGroupID: String? {
        paywall.subscriptions.first?.product.subscriptionGroupID
    }

    /// The clock the model reads the banner and ownership at.
    public var currentDate: Date { now() }
}
