public import Foundation

/// Buys products, restores purchases, and makes sure every transaction reaches your server exactly
/// once before it is finished.
///
/// Two styles: async/await (``purchase(_:quantity:)``, ``statusUpdates()``) and the classic
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
    let session: StoreSession
    private let listenerID = UUID()
    private weak var delegate: (any PaymentManagerDelegate)?
    private var continuations: [UUID: AsyncStream<PaymentStatus>.Continuation] = [:]

    /// Creates a manager and starts delivering: unfinished transactions from earlier runs are
    /// queued and sent, and the store's update stream is observed (once per store).
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
        session = try await StoreSessionRegistry.shared.session(
            backend: backend, server: server, appUserID: appUserID, directory: storageDirectory, now: now)
        let id = listenerID
        await session.listen(id) { [weak self] status in
            guard let self else { return }
            Task { await self.forward(status) }
        }
        await session.start()
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

    func forward(_ status: PaymentStatus) {
        for continuation in continuations.values { continuation.yield(status) }
        delegate?.onPaymentStatus(status)
        switch status {
        case .purchased(let transaction), .restored(let transaction): delegate?.completePayment(transaction)
        case .failed(_, let error): delegate?.onPaymentError(error)
        default: break
        }
    }

    /// Whether the account may buy; check this before offering purchases.
    public func canMakePayments() async -> Bool {
        (try? await session.backend.canMakePayments()) ?? false
    }

    /// Products for IDs, localized for the customer's storefront, and the IDs that are invalid.
    public func products(
        for identifiers: [String]
    ) async throws -> (products: [StoreProduct], invalid: [InvalidProduct]) {
        do {
            let result = try await session.backend.products(for: identifiers)
            forward(.productInfoReceived(products: result.products, invalid: result.invalid))
            delegate?.responseProductInfo(result.products, invalidProducts: result.invalid)
            return result
        } catch {
            delegate?.onPaymentError(.productInfoFailed)
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
        guard await canMakePayments() else {
            forward(.failed(productID: product.id, error: .notAllowed))
            throw KakinError(.storeFailure, "purchases are not allowed on this account", storeKitCode: 4)
        }
        forward(.purchasing(productID: product.id))
        let result: StorePurchaseResult
        do {
            result = try await session.backend.purchase(
                product.id, quantity: quantity, appAccountToken: appAccountToken)
        } catch {
            forward(.failed(productID: product.id, error: PaymentError(error)))
            throw error
        }
        switch result {
        case .pending:
            forward(.deferred(productID: product.id))
            return .pending
        case .cancelled:
            forward(.failed(productID: product.id, error: .cancelled))
            return .cancelled
        case .purchased(let transaction):
            CrashPoint.reach("afterPurchase")
            let customer = try await session.enqueueAndDeliver(transaction)
            return .purchased(transaction, customer: customer)
        }
    }

    /// Restores non-consumables and subscriptions: each is delivered to the server (idempotently),
    /// then `restoreFinished`.
    public func restore() async throws -> [StoreTransaction] {
        let transactions: [StoreTransaction]
        do { transactions = try await session.backend.restore() } catch {
            forward(.failed(productID: "", error: .restoreFailed))
            throw error
        }
        for transaction in transactions {
            _ = try await session.outbox.enqueue(transaction, appUserID: session.appUserID, now: session.now())
        }
        await session.deliverDue()
        for transaction in transactions { forward(.restored(transaction)) }
        forward(.restoreFinished)
        return transactions
    }

    /// Sends whatever is due in the outbox now (the SDK also does this on start and on updates).
    @discardableResult
    public func deliverPending() async -> Int {
        await session.deliverDue()
    }

    /// Transactions bought but not yet acknowledged by the server.
    public func pendingDeliveries() async -> [StoreTransaction] {
        await session.outbox.all.map(\.transaction)
    }

    /// Downloads hosted content before finishing, as apps with hosted content must: for every
    /// acknowledged transaction for which `request` returns a content request, the package is
    /// downloaded (resumably, hash-checked, unpacked) and only then is the transaction finished. A
    /// failed download leaves the transaction queued and unfinished, to be tried again.
    public func enableDownloads(
        _ downloads: DownloadManager, request: @escaping @Sendable (StoreTransaction) -> ContentRequest?
    ) async {
        await session.setBeforeFinish { transaction in
            guard let contentRequest = request(transaction) else { return }
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
        await session.stopListening(listenerID)
        await session.stop()
        await StoreSessionRegistry.shared.forget(session)
        for continuation in continuations.values { continuation.finish() }
        continuations.removeAll()
    }

    /// The customer, as the server (signature checked) says.
    public func customerInfo() async throws -> CustomerInfo {
        try await session.server.customer(appUserID: session.appUserID)
    }
}
