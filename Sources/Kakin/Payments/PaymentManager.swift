public import Foundation
import Synchronization

/// Buys products, restores purchases, and makes sure every transaction reaches your server exactly
/// once before it is finished.
///
/// Two styles: async/await (``purchase(_:quantity:appAccountToken:)``, ``statusUpdates()``) and the classic
/// delegate (``PaymentManagerDelegate``). There is no global singleton: make as many managers as you
/// like; all managers of one store account share one transaction observer and one durable outbox.
///
/// ```swift
/// let payments = try await PaymentManager(backend: backend, server: server, appUserID: "alice")
/// let (products, invalid) = try await payments.products(for: ["com.example.kakin.removeAd"])
/// switch try await payments.purchase(products[0]) {
/// case .purchased(_, let customer): unlock(customer)
/// case .pending: showWaitingForApproval()
/// case .cancelled: break
/// }
/// ```
public actor PaymentManager {
    /// The session this manager delivers through (shared with the app's other managers).
    public let session: StoreSession
    /// The user this manager's purchases and restores are delivered for: the one it was made
    /// for, until ``KakinStore/logIn(_:)`` or ``KakinStore/logOut()`` switches it.
    public nonisolated var appUserID: String { currentUser.withLock { $0 } }
    private let currentUser: Mutex<String>
    private let listenerID = UUID()
    private let events: AsyncStream<PaymentStatus>.Continuation
    private var pump: Task<Void, Never>?
    private weak var delegate: (any PaymentManagerDelegate)?
    private var continuations: [UUID: AsyncStream<PaymentStatus>.Continuation] = [:]

    /// Creates a manager on the app's session and starts delivering: unfinished transactions
    /// from earlier runs are queued and sent, and the store's update stream is observed (once
    /// per session, however many managers share it).
    ///
    /// - Parameters:
    ///   - session: the app's ``StoreSession``.
    ///   - appUserID: the user this manager buys for; the session's user by default.
    public init(session: StoreSession, appUserID: String? = nil) async {
        self.session = session
        if let appUserID {
            currentUser = Mutex(appUserID)
        } else {
            currentUser = Mutex(await session.appUserID)
        }
        // One stream per manager: the session's events and the manager's own, in the order they
        // happen, forwarded by one task to the delegate and to every `statusUpdates()` stream.
        let (stream, continuation) = AsyncStream.makeStream(of: PaymentStatus.self)
        events = continuation
        await session.subscribe(listenerID, appUserID: self.appUserID, continuation)
        pump = Task { [weak self] in
            for await status in stream {
                await self?.forward(status)
            }
        }
        await session.start()
    }

    /// Creates a manager with a session of its own. Prefer one ``StoreSession`` for the whole app
    /// and ``init(session:appUserID:)``: each session observes the store once.
    ///
    /// - Parameters:
    ///   - backend: the store (sandbox or StoreKit).
    ///   - server: your KakinServer.
    ///   - appUserID: your app's user ID, to which purchases are attributed.
    ///   - storageDirectory: where the outbox lives (Application Support on Apple platforms).
    ///   - now: the clock, for retry times.
    public init(
        backend: any StoreBackend, server: KakinServerClient, appUserID: String,
        storageDirectory: URL = PaymentManager.defaultDirectory, now: @escaping @Sendable () -> Date = { Date() }
    ) async throws {
        let session = try StoreSession(
            backend: backend, server: server, appUserID: appUserID, storageDirectory: storageDirectory, now: now)
        await self.init(session: session, appUserID: appUserID)
    }

    /// `~/Library/Application Support/Kakin` on Apple platforms, `~/.kakin` elsewhere.
    public static var defaultDirectory: URL {
        #if canImport(Darwin)
        FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0].appendingPathComponent(
            "Kakin")
        #else
        FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".kakin")
        #endif
    }

    /// Sets (or clears) the classic delegate. Held weakly.
    public func setDelegate(_ delegate: (any PaymentManagerDelegate)?) {
        self.delegate = delegate
    }

    /// Every status change from now on.
    public func statusUpdates() -> AsyncStream<PaymentStatus> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: PaymentStatus.self)
        continuations[id] = continuation
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            Task { await self.removeContinuation(id) }
        }
        return stream
    }

    private func removeContinuation(_ id: UUID) { continuations[id] = nil }

    /// Delivers one status to the delegate and the streams: called by the pump, in order.
    func forward(_ status: PaymentStatus) {
        for continuation in continuations.values { continuation.yield(status) }
        delegate?.onPaymentStatus(status)
        switch status {
        case .purchased(let transaction), .restored(let transaction): delegate?.completePayment(transaction)
        case .failed(_, let error): delegate?.onPaymentError(error)
        case .productInfoReceived(let products, let invalid):
            delegate?.responseProductInfo(products, invalidProducts: invalid)
        default: break
        }
    }

    /// Queues a status of this manager behind the ones already queued.
    private func post(_ status: PaymentStatus) {
        events.yield(status)
    }

    /// Whether the account may buy; check this before offering purchases. Throws when the store
    /// cannot be asked (no network): that is not the same as "purchases are not allowed".
    public func canMakePayments() async throws -> Bool {
        try await session.backend.canMakePayments()
    }

    /// Products for IDs, localized for the customer's storefront, and the IDs that are invalid.
    public func products(
        for identifiers: [String]
    ) async throws -> (products: [StoreProduct], invalid: [InvalidProduct]) {
        do {
            let result = try await session.backend.products(for: identifiers)
            post(.productInfoReceived(products: result.products, invalid: result.invalid))
            return result
        } catch {
            post(.failed(productID: "", error: .productInfoFailed))
            throw error
        }
    }

    /// Buys a product: checks `canMakePayments`, pays, queues the transaction durably, delivers it
    /// to the server, and finishes it once the server acknowledged it.
    public func purchase(
        _ product: StoreProduct, quantity: Int = 1, appAccountToken: UUID? = nil
    ) async throws
        -> PurchaseOutcome
    {
        try await purchase(product, offer: nil, quantity: quantity, appAccountToken: appAccountToken)
    }

    /// Buys a subscription with one of its offers, as ``purchase(_:quantity:appAccountToken:)``
    /// does otherwise.
    ///
    /// - A promotional offer is signed by the purchase server for this customer first
    ///   (`POST /v1/customers/{id}/offers/sign`); the server refuses offers its catalog lacks and
    ///   customers the offer's rule excludes, and that refusal is thrown. The server signs over
    ///   the customer's own app account token only (the one the SDK derives from the app user ID):
    ///   pass no `appAccountToken` of your own with a signed offer, or the server refuses it
    ///   (`forbidden`, cause `foreignAppAccountToken`).
    /// - A win-back offer needs no signature: the store checks the customer's eligibility.
    /// - The introductory offer is decided by the server when it can sign an eligibility for the
    ///   customer, by the store otherwise.
    public func purchase(
        _ product: StoreProduct, offer: SubscriptionOffer?, quantity: Int = 1,
        appAccountToken: UUID? = nil
    ) async throws -> PurchaseOutcome {
        let allowed: Bool
        do { allowed = try await canMakePayments() } catch {
            post(.failed(productID: product.id, error: PaymentError(error)))
            throw error
        }
        guard allowed else {
            post(.failed(productID: product.id, error: .notAllowed))
            throw KakinError(.storeFailure, "purchases are not allowed on this account", storeKitCode: 4)
        }
        post(.purchasing(productID: product.id))
        let result: StorePurchaseResult
        // The token ties the transaction to this user wherever the store replays it later.
        let token = appAccountToken ?? StoreSession.accountToken(for: appUserID)
        do {
            try await session.outbox.register(token: token, for: appUserID)
            var options = StorePurchaseOptions(quantity: quantity, appAccountToken: token)
            if let offer { try await sign(offer, of: product, token: token, into: &options) }
            result = try await session.backend.purchase(product.id, options: options)
        } catch {
            post(.failed(productID: product.id, error: PaymentError(error)))
            throw error
        }
        switch result {
        case .pending:
            post(.deferred(productID: product.id))
            return .pending
        case .cancelled:
            post(.failed(productID: product.id, error: .cancelled))
            return .cancelled
        case .purchased(let transaction):
            CrashPoint.reach("afterPurchase")
            // A store answers a purchase of something the account owns already with the old
            // transaction (maybe another customer's, with another token): that one is not new,
            // and goes with the device's app transaction, as a restore does.
            let isNew = transaction.appAccountToken?.lowercased() == token.uuidString.lowercased()
            let customer = try await session.enqueueAndDeliver(
                transaction, appUserID: appUserID, isNewPurchase: isNew)
            return .purchased(transaction, customer: customer)
        }
    }

    /// Shows the store's offer code redemption sheet and delivers what the customer redeemed as a
    /// purchase is delivered: queued durably, sent to the server, finished once the server
    /// acknowledged it. Where the store's sheet says nothing of what happened (StoreKit before
    /// iOS 27), the outcome is ``OfferCodeRedemptionOutcome/closed``, and a redeemed code arrives
    /// through the store's updates, which the session delivers by itself.
    ///
    /// A redemption carries no app account token of the customer's, so its transaction goes with
    /// the device's app transaction, as a restore's does. The store's refusals (a code already
    /// used, one that does not exist) are thrown and reported as a failed status.
    public func redeemOfferCode() async throws -> OfferCodeRedemptionOutcome {
        let result: OfferCodeRedemption
        do { result = try await session.backend.presentOfferCodeRedeemSheet() } catch {
            post(.failed(productID: "", error: PaymentError(error)))
            throw error
        }
        switch result {
        case .closed: return .closed
        case .cancelled: return .cancelled
        case .redeemed(let transaction):
            let customer = try await session.enqueueAndDeliver(transaction, appUserID: appUserID)
            return .redeemed(transaction, customer: customer)
        }
    }

    private func sign(
        _ offer: SubscriptionOffer, of product: StoreProduct, token: UUID,
        into options: inout StorePurchaseOptions
    ) async throws {
        switch offer.kind {
        case .promotional:
            guard let offerID = offer.id else {
                throw KakinError(.notConfigured, "a promotional offer needs its ID")
            }
            options.promotionalOffer = try await session.server.signOffer(
                .promotional, productID: product.id, offerID: offerID, appAccountToken: token, appUserID: appUserID)
        case .winBack:
            guard let offerID = offer.id else { throw KakinError(.notConfigured, "a win-back offer needs its ID") }
            options.winBackOfferID = offerID
        case .introductory:
            // Without an eligibility the store decides, as it does for any introductory offer.
            options.introductoryOfferEligibility = try? await session.server.signOffer(
                .introductoryEligibility, productID: product.id, appAccountToken: token, appUserID: appUserID)
        }
    }

    /// Restores non-consumables and subscriptions: each is delivered to the server (idempotently),
    /// with the device's app transaction, then `restoreFinished`. A customer who cancels the
    /// store's sign-in has restored nothing: that is not a failure, so it posts `restoreFinished`
    /// and returns no transactions.
    ///
    /// The app transaction proves that this device is signed in to the Apple Account that bought
    /// what it restores: under the server's transfer policy `transferToNewUser`, a purchase another
    /// customer owns moves to this one. A transaction the server refused for good before (say,
    /// ``PaymentError/purchasedByAnotherAccount`` while another Apple Account was signed in) is
    /// tried again.
    public func restore() async throws -> [StoreTransaction] {
        let transactions: [StoreTransaction]
        do { transactions = try await session.backend.restore() } catch {
            guard PaymentError(error) != .cancelled else {
                post(.restoreFinished)
                return []
            }
            post(.failed(productID: "", error: .restoreFailed))
            throw error
        }
        // The customer may have signed in to another Apple Account since the app transaction was read.
        await session.forgetAppTransaction()
        // Each is reported once, as restored, when the server has it (now, or on a later retry).
        for transaction in transactions {
            _ = try await session.outbox.enqueue(transaction, appUserID: appUserID, now: session.now(), restored: true)
        }
        await session.deliverDue()
        post(.restoreFinished)
        return transactions
    }

    /// Sends everything queued now, whatever its retry time (call it when the network comes
    /// back; the SDK also does this at start and retries on its own schedule). An attempt the
    /// SDK already had in flight, which may have started before the network came back, is waited
    /// for, and what it left queued is sent again. Returns how many were delivered and finished
    /// by this call.
    @discardableResult
    public func deliverPending() async -> Int {
        await session.deliverDue(ignoringBackoff: true)
    }

    /// Transactions bought but not yet acknowledged by the server (those queued for an anonymous
    /// customer this one was before logging in included).
    public func pendingDeliveries() async -> [StoreTransaction] {
        await queuedEntries().filter { !$0.rejected }.map(\.transaction)
    }

    /// The outbox entries of this manager's user and of the anonymous users it was before.
    private func queuedEntries() async -> [DeliveryOutbox.Entry] {
        var entries: [DeliveryOutbox.Entry] = []
        for user in await session.identities(of: appUserID) { entries += await session.outbox.entries(of: user) }
        return entries
    }

    /// Buys, restores and reads the customer for `appUserID` from now on, and reports the
    /// statuses of that user's transactions (``KakinStore/logIn(_:)`` and ``KakinStore/logOut()``
    /// switch users this way).
    func switchUser(to appUserID: String) async {
        currentUser.withLock { $0 = appUserID }
        await session.subscribe(listenerID, appUserID: appUserID, events)
    }

    /// Downloads hosted content before finishing, as apps with hosted content must: for every
    /// acknowledged transaction for which `request` returns a content request, the package is
    /// downloaded (resumably, hash-checked, unpacked) and only then is the transaction finished. A
    /// failed download leaves the transaction queued and unfinished, to be tried again.
    ///
    /// `request` is asked again at each attempt, so a request that carries a customer token
    /// (from ``KakinServerClient/contentRequest(productID:appUserID:)``) has a fresh one; what it
    /// throws fails the attempt, which is tried again later.
    public func enableDownloads(
        _ downloads: DownloadManager, request: @escaping @Sendable (StoreTransaction) async throws -> ContentRequest?
    ) async {
        await session.setBeforeFinish(Self.downloading(into: downloads) { transaction, _ in try await request(transaction) })
    }

    /// The step before finishing that downloads what `request` names (for a transaction and the
    /// app user it was delivered for) and throws while the content is not on the device.
    static func downloading(
        into downloads: DownloadManager,
        request: @escaping @Sendable (StoreTransaction, _ appUserID: String) async throws -> ContentRequest?
    ) -> @Sendable (StoreTransaction, String) async throws -> Void {
        { transaction, appUserID in
            let contentRequest: ContentRequest?
            do { contentRequest = try await request(transaction, appUserID) } catch {
                throw KakinError(
                    .downloadFailed, "the content request for \(transaction.productID) failed: \(error)",
                    isRetryable: true)
            }
            guard let contentRequest else { return }
            let started = await downloads.start(contentRequest)
            let result = await downloads.wait(for: started.id)
            guard result?.state == .finished else {
                throw result?.error
                    ?? KakinError(.downloadFailed, "the content of \(transaction.productID) did not download")
            }
        }
    }

    /// Stops observing the store and releases the shared session (as when the app quits). The
    /// outbox stays on disk; the next manager delivers what is left.
    public func shutdown() async {
        await detach()
        await session.stop()
        pump?.cancel()
    }

    /// Stops this manager's events without stopping the session other managers share.
    public func detach() async {
        await session.unsubscribe(listenerID)
        events.finish()
        for continuation in continuations.values { continuation.finish() }
        continuations.removeAll()
    }

    /// The customer, as the server (signature checked) says; while the server cannot be reached,
    /// the entitlements the store's own transactions give, marked ``CustomerInfo/Source/device``
    /// (pass `allowOffline: false` to get the network error instead).
    public func customerInfo(allowOffline: Bool = true) async throws -> CustomerInfo {
        try await session.customer(appUserID: appUserID, allowOffline: allowOffline)
    }

    /// Transactions the server refused for good (a verification failure, a purchase another
    /// customer owns), with the reason: kept on the device and not finished, not retried by
    /// themselves (a restore that finds them tries again), reported once through the status
    /// stream when refused.
    public func rejectedDeliveries() async -> [(transaction: StoreTransaction, reason: String)] {
        await queuedEntries().filter(\.rejected).map { ($0.transaction, $0.lastError ?? "refused") }
    }
}
