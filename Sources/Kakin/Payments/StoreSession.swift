import Foundation

/// Everything shared by the managers of one store account: the outbox, the single transaction
/// observer, and the delivery loop. However many `PaymentManager`s an app makes, there is one
/// session per store, so a transaction is observed once and uploaded once (registering the
/// observer twice would upload the same receipt twice).
actor StoreSession {
    let backend: any StoreBackend
    let server: KakinServerClient
    let appUserID: String
    let outbox: DeliveryOutbox
    let now: @Sendable () -> Date
    private var observer: Task<Void, Never>?
    private var inFlight: Set<String> = []
    private var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    private var listeners: [UUID: @Sendable (PaymentStatus) -> Void] = [:]
    private(set) var lastCustomer: CustomerInfo?
    /// Called after the server acknowledged a transaction and before it is finished (downloads).
    var beforeFinish: (@Sendable (StoreTransaction) async throws -> Void)?

    init(
        backend: any StoreBackend, server: KakinServerClient, appUserID: String, directory: URL,
        now: @escaping @Sendable () -> Date
    )
        throws
    {
        self.backend = backend
        self.server = server
        self.appUserID = appUserID
        self.now = now
        outbox = try DeliveryOutbox(directory: directory)
    }

    func listen(_ id: UUID, _ listener: @escaping @Sendable (PaymentStatus) -> Void) { listeners[id] = listener }
    func stopListening(_ id: UUID) { listeners[id] = nil }
    func setBeforeFinish(_ hook: (@Sendable (StoreTransaction) async throws -> Void)?) { beforeFinish = hook }

    func emit(_ status: PaymentStatus) {
        for listener in listeners.values { listener(status) }
    }

    /// Starts the one observer of the store's update stream (idempotent) and queues what the
    /// store still has unfinished, as StoreKit replays at launch.
    func start() async {
        if observer == nil {
            let stream = backend.transactionUpdates()
            observer = Task { [weak self] in
                for await transaction in stream {
                    await self?.received(transaction)
                }
            }
        }
        if let unfinished = try? await backend.unfinishedTransactions() {
            for transaction in unfinished {
                _ = try? await outbox.enqueue(transaction, appUserID: appUserID, now: now())
            }
        }
        _ = await deliverDue()
    }

    var isObserving: Bool { observer != nil }

    func stop() {
        observer?.cancel()
        observer = nil
    }

    private func received(_ transaction: StoreTransaction) async {
        _ = try? await outbox.enqueue(transaction, appUserID: appUserID, now: now())
        _ = await deliverDue()
    }

    /// Queues a transaction durably, then tries to deliver it now.
    func enqueueAndDeliver(_ transaction: StoreTransaction) async throws -> CustomerInfo? {
        try await outbox.enqueue(transaction, appUserID: appUserID, now: now())
        CrashPoint.reach("afterEnqueue")
        _ = await deliverDue()
        // Another path (the update stream) may be delivering it right now: wait for that attempt.
        if inFlight.contains(transaction.id) {
            await withCheckedContinuation { continuation in waiters[transaction.id, default: []].append(continuation) }
        }
        let stillQueued = await outbox.all.contains { $0.transaction.id == transaction.id }
        return stillQueued ? nil : lastCustomer
    }

    /// Delivers every due entry: post to the server, then (and only then) finish at the store,
    /// then remove from the outbox. Retryable failures wait with exponential backoff.
    @discardableResult
    func deliverDue() async -> Int {
        var delivered = 0
        for entry in await outbox.due(at: now()) where !inFlight.contains(entry.transaction.id) {
            inFlight.insert(entry.transaction.id)
            defer {
                inFlight.remove(entry.transaction.id)
                for waiter in waiters.removeValue(forKey: entry.transaction.id) ?? [] { waiter.resume() }
            }
            do {
                CrashPoint.reach("beforeDelivery")
                let customer = try await server.deliver(entry.transaction, appUserID: entry.appUserID)
                CrashPoint.reach("afterDelivery")
                lastCustomer = customer
                if let beforeFinish { try await beforeFinish(entry.transaction) }
                try await backend.finish(entry.transaction)
                CrashPoint.reach("afterFinish")
                try await outbox.remove(entry.transaction.id)
                delivered += 1
                emit(.purchased(entry.transaction))
            } catch let error as KakinError where !error.isRetryable && error.code != .downloadFailed {
                try? await outbox.failed(entry.transaction.id, error: error.message, retryAt: nil, now: now())
                emit(.failed(productID: entry.transaction.productID, error: PaymentError(error)))
            } catch {
                let delay = min(3600, 2 * pow(2, Double(min(entry.attempts, 11))))
                try? await outbox.failed(
                    entry.transaction.id, error: "\(error)", retryAt: now().addingTimeInterval(delay), now: now())
                emit(.awaitingServer(entry.transaction))
            }
        }
        return delivered
    }
}

/// One session per store account and storage directory, for the whole process.
actor StoreSessionRegistry {
    static let shared = StoreSessionRegistry()
    private var sessions: [String: StoreSession] = [:]

    func session(
        backend: any StoreBackend, server: KakinServerClient, appUserID: String, directory: URL,
        now: @escaping @Sendable () -> Date
    ) throws -> StoreSession {
        let key = backend.storeIdentifier + "|" + directory.standardizedFileURL.path + "|" + appUserID
        if let session = sessions[key] { return session }
        let session = try StoreSession(
            backend: backend, server: server, appUserID: appUserID, directory: directory, now: now)
        sessions[key] = session
        return session
    }

    func forget(_ session: StoreSession) {
        sessions = sessions.filter { $0.value !== session }
    }
}
