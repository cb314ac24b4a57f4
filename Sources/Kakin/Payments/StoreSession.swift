public import Foundation
public import KakinWire
import Crypto

/// Waits until a moment. Injected, so tests decide when time passes instead of sleeping.
public protocol DeliverySleeper: Sendable {
    /// Returns at `date` (or throws when cancelled).
    func sleep(until date: Date, now: Date) async throws
}

/// Sleeps on the system clock.
public struct SystemDeliverySleeper: DeliverySleeper {
    /// Creates the sleeper.
    public init() {}

    /// Sleeps with `Task.sleep` for the time from `now` to `date` (not at all if `date` has passed);
    /// throws when the task is cancelled.
    public func sleep(until date: Date, now: Date) async throws {
        let seconds = max(0, date.timeIntervalSince(now))
        try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
    }
}

/// When a delivery that failed for a passing reason (no network, a 5xx) is tried again:
/// exponential backoff from `base` up to `maximum`, each delay shortened by a random fraction of
/// up to `jitter` so that many devices coming back online do not all call at once.
public struct RetryPolicy: Sendable {
    /// The delay after the first failure, in seconds; it doubles with every further failure.
    public var base: TimeInterval
    /// The longest delay, in seconds, however many failures there were.
    public var maximum: TimeInterval
    /// 0 … 1: the share of each delay that is random.
    public var jitter: Double
    /// A number in 0 ..< 1; random by default, fixed in tests.
    public var random: @Sendable () -> Double

    /// Creates a policy: by default 2 seconds, doubling up to an hour, each delay cut by up to half at
    /// random. `jitter` is clamped to 0 … 1.
    public init(
        base: TimeInterval = 2, maximum: TimeInterval = 3600, jitter: Double = 0.5,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.base = base
        self.maximum = maximum
        self.jitter = min(max(jitter, 0), 1)
        self.random = random
    }

    /// The delay after `attempts` failed attempts (0 for the first failure).
    public func delay(afterAttempts attempts: Int) -> TimeInterval {
        let full = min(maximum, base * pow(2, Double(min(max(attempts, 0), 30))))
        // Clamped here too: the properties may have been changed after the policy was made.
        let share = min(max(jitter, 0), 1) * min(max(random(), 0), 1)
        return max(0, full * (1 - share))
    }
}

/// Everything the managers of one store account share: the durable outbox of the storage
/// directory, the single observer of the store's transaction updates, and the delivery loop.
///
/// Make one when the app starts and hand it to every ``PaymentManager``: with one session there is
/// one transaction observer, so a transaction is observed once and uploaded once (an observer
/// registered twice would upload the same purchase twice). There is no hidden global: the session
/// is a value the app owns. Several sessions, or several processes, may still share a storage
/// directory: the outbox file is locked for every change, so nothing queued is ever lost.
public actor StoreSession {
    /// The store.
    public let backend: any StoreBackend
    /// Your KakinServer.
    public let server: KakinServerClient
    /// The durable outbox of the storage directory.
    public let outbox: DeliveryOutbox
    /// What the device needs to compute entitlements while the server cannot be reached.
    public let offline: OfflineEntitlements
    let now: @Sendable () -> Date
    let retryPolicy: RetryPolicy
    let sleeper: any DeliverySleeper
    /// The user the store's own updates (launch replays, renewals, approvals) are delivered for.
    public private(set) var appUserID: String
    private var observer: Task<Void, Never>?
    private var retryTask: Task<Void, Never>?
    private var inFlight: Set<String> = []
    private var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    private var wantedAnswers: Set<String> = []
    private var answers: [String: CustomerInfo] = [:]
    private var subscribers: [UUID: (appUserID: String, continuation: AsyncStream<PaymentStatus>.Continuation)] = [:]
    /// Each anonymous user this device was, mapped to the identified user it became at a log-in:
    /// what is still queued for the anonymous user is that user's now (kept in the outbox's file).
    private var successors: [String: String] = [:]
    /// The device's app transaction, once the store gave it (or said it has none).
    private var appTransaction: AppTransactionState = .unknown
    private enum AppTransactionState {
        case unknown
        case fetching(Task<String?, any Error>)
        case known(String?)
    }
    /// Called after the server acknowledged a transaction and before it is finished (downloads),
    /// with the app user it was delivered for.
    var beforeFinish: (@Sendable (StoreTransaction, _ appUserID: String) async throws -> Void)?

    /// Creates a session; call ``start()`` (a ``PaymentManager`` does) to observe and deliver.
    ///
    /// - Parameters:
    ///   - backend: the store (sandbox or StoreKit).
    ///   - server: your KakinServer.
    ///   - appUserID: the signed-in user; change it with ``setAppUserID(_:)``.
    ///   - storageDirectory: where the outbox lives (Application Support on Apple platforms).
    ///   - now: the clock, for retry times.
    ///   - retryPolicy: backoff and jitter for deliveries that failed for a passing reason.
    ///   - sleeper: how the session waits for the next retry.
    ///   - offlineGracePeriod: how long, while the server cannot be reached, the entitlements the
    ///     store's own transactions give are granted after the server last answered for the user
    ///     (three days by default); see ``OfflineEntitlements``.
    public init(
        backend: any StoreBackend, server: KakinServerClient, appUserID: String,
        storageDirectory: URL = PaymentManager.defaultDirectory, now: @escaping @Sendable () -> Date = { Date() },
        retryPolicy: RetryPolicy = RetryPolicy(), sleeper: any DeliverySleeper = SystemDeliverySleeper(),
        offlineGracePeriod: TimeInterval = OfflineEntitlements.defaultGracePeriod
    ) throws {
        self.backend = backend
        self.server = server
        self.appUserID = appUserID
        self.now = now
        self.retryPolicy = retryPolicy
        self.sleeper = sleeper
        outbox = try DeliveryOutbox(directory: storageDirectory)
        offline = OfflineEntitlements(directory: storageDirectory, gracePeriod: offlineGracePeriod)
    }

    /// Sets the user the store's own updates are delivered for (after a sign-in).
    public func setAppUserID(_ appUserID: String) {
        self.appUserID = appUserID
    }

    /// Makes `appUserID` the session's user, as ``setAppUserID(_:)`` does; when it is the
    /// identified customer the anonymous user `former` became (the server moved that user's
    /// purchases), the statuses of what is still queued for `former` go to `appUserID`'s managers.
    func identify(_ appUserID: String, succeeding former: String?) async {
        if let former, former != appUserID {
            successors[former] = appUserID
            try? await outbox.recordSuccession(of: former, by: appUserID)
        }
        self.appUserID = appUserID
    }

    /// The user whose managers hear about the transactions of `appUserID`: the identified
    /// customer it became, or itself.
    func recipient(of appUserID: String) -> String {
        var user = appUserID
        var seen: Set<String> = [user]
        while let next = successors[user], seen.insert(next).inserted { user = next }
        return user
    }

    /// `appUserID` and every anonymous user that became it on this device.
    func identities(of appUserID: String) -> [String] {
        [appUserID] + successors.keys.filter { $0 != appUserID && recipient(of: $0) == appUserID }.sorted()
    }

    /// Sends the events about `appUserID`'s transactions to `continuation`.
    func subscribe(_ id: UUID, appUserID: String, _ continuation: AsyncStream<PaymentStatus>.Continuation) {
        subscribers[id] = (appUserID, continuation)
    }

    func unsubscribe(_ id: UUID) { subscribers[id] = nil }
    func setBeforeFinish(_ hook: (@Sendable (StoreTransaction, _ appUserID: String) async throws -> Void)?) {
        beforeFinish = hook
    }

    /// Sends `status` about a transaction of `appUserID` to that user's managers, in order.
    func emit(_ status: PaymentStatus, for appUserID: String) {
        let recipient = recipient(of: appUserID)
        for subscriber in subscribers.values
        where subscriber.appUserID == appUserID || subscriber.appUserID == recipient {
            subscriber.continuation.yield(status)
        }
    }

    /// The customer as the server says, or, when the server cannot be asked for this customer
    /// (it cannot be reached, or no valid customer token can be had:
    /// ``KakinError/Code/unauthorized``), the entitlements the store's own transactions give
    /// (``CustomerInfo/Source/device``). Every server answer is remembered, so the device learns
    /// which entitlement each product unlocks.
    public func customer(appUserID: String, allowOffline: Bool = true) async throws -> CustomerInfo {
        do {
            let customer = try await server.customer(appUserID: appUserID)
            await offline.learn(from: customer, at: now())
            return customer
        } catch let error as KakinError where (error.code == .network || error.code == .unauthorized) && allowOffline {
            let transactions: [StoreTransaction]
            // The store cannot be asked either: the server's error is the one that says why.
            do { transactions = try await backend.currentEntitlements() } catch _ { throw error }
            return await offline.customer(appUserID: appUserID, transactions: transactions, at: now())
        }
    }

    /// Loads the server's catalog and learns from it which entitlement each product unlocks (for
    /// offline entitlements before the first purchase was ever answered).
    @discardableResult
    public func refreshCatalog(locale: String = "en_US") async throws -> CatalogAnswer {
        let catalog = try await server.catalog(locale: locale)
        var rules: [String: [String]] = [:]
        for product in catalog.products {
            let names = product.grants.compactMap(\.entitlement)
            if !names.isEmpty { rules[product.productId] = names }
        }
        await offline.learn(rules: rules)
        return catalog
    }

    /// Starts the one observer of the store's update stream (idempotent), queues what the store
    /// still has unfinished (as StoreKit replays at launch) and delivers what is due, scheduling
    /// the retries of what is not.
    public func start() async {
        for (anonymous, identified) in await outbox.successions() where successors[anonymous] == nil {
            successors[anonymous] = identified
        }
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
                _ = try? await outbox.enqueue(transaction, appUserID: await owner(of: transaction), now: now())
            }
        }
        // A launch is a fresh chance (the network may be back): everything queued is tried now,
        // whatever its backoff said; what fails again is scheduled anew.
        await deliverDue(ignoringBackoff: true)
    }

    /// Whether the store's updates are observed.
    public var isObserving: Bool { observer != nil }

    /// Stops observing and retrying (the outbox stays on disk).
    public func stop() {
        observer?.cancel()
        observer = nil
        retryTask?.cancel()
        retryTask = nil
        for subscriber in subscribers.values { subscriber.continuation.finish() }
        subscribers.removeAll()
    }

    /// The user a transaction the store hands over is delivered for: the one its app account
    /// token stands for on this device, else the session's user.
    func owner(of transaction: StoreTransaction) async -> String {
        await outbox.appUserID(forToken: transaction.appAccountToken) ?? appUserID
    }

    /// The app account token the SDK gives a user's purchases: a UUID derived from the app user
    /// ID (SHA-256, shaped as a version 8 UUID), the same on every device, revealing nothing of it.
    public static func accountToken(for appUserID: String) -> UUID {
        AppAccountToken.derived(from: appUserID)
    }

    private func received(_ transaction: StoreTransaction) async {
        _ = try? await outbox.enqueue(transaction, appUserID: await owner(of: transaction), now: now())
        await deliverDue()
    }

    /// Queues a transaction durably for `appUserID`, then tries to deliver it now; the server's
    /// answer to this delivery, or `nil` when it is still queued (the server could not be reached).
    /// `isNewPurchase`: a purchase just made, delivered without the device's app transaction.
    func enqueueAndDeliver(
        _ transaction: StoreTransaction, appUserID: String, restored: Bool = false, isNewPurchase: Bool = false
    ) async throws -> CustomerInfo? {
        wantedAnswers.insert(transaction.id)
        defer {
            wantedAnswers.remove(transaction.id)
            answers[transaction.id] = nil
        }
        try await outbox.enqueue(
            transaction, appUserID: appUserID, now: now(), restored: restored, isNewPurchase: isNewPurchase)
        CrashPoint.reach("afterEnqueue")
        await deliverDue()
        // Another path (the update stream) may be delivering it right now: wait for that attempt.
        await attemptInFlight(transaction.id)
        return answers[transaction.id]
    }

    /// Whether a caller waits for the attempt to deliver `transactionID` that is in flight.
    func waitsForAttempt(on transactionID: String) -> Bool { waiters[transactionID] != nil }

    /// Returns once no attempt to deliver `transactionID` is in flight (at once when none is).
    func attemptInFlight(_ transactionID: String) async {
        while inFlight.contains(transactionID) {
            await withCheckedContinuation { continuation in waiters[transactionID, default: []].append(continuation) }
        }
    }

    /// Delivers every due entry (every queued entry when `ignoringBackoff`): post to the server,
    /// then (and only then) finish at the store, then remove from the outbox. Retryable failures
    /// wait with backoff and jitter, and a retry is scheduled for the earliest of them.
    ///
    /// An entry another path is sending at the moment is left to that path, except when
    /// `ignoringBackoff` (the app saying the network is back): then that attempt, which may have
    /// started before, is waited for, and the entry is sent again if it is still queued.
    ///
    /// A transaction the app did not just buy goes with the device's app transaction, the proof
    /// the server needs before it moves a purchase another customer owns. Refusals:
    /// - permanent ones (a forged transaction; a purchase another customer owns, when the proof
    ///   went with it or was not needed) mark the entry rejected: kept, reported once, not
    ///   finished, never retried by themselves;
    /// - a customer token the app cannot supply or the server refuses (``KakinError/Code/unauthorized``),
    ///   like the network, waits and is retried: the app's backend being briefly unreachable never
    ///   costs a purchase. So does a purchase another customer owns when the device's app
    ///   transaction could not be had this time: with it, the server may move the purchase.
    @discardableResult
    func deliverDue(ignoringBackoff: Bool = false) async -> Int {
        var delivered = 0
        let entries = ignoringBackoff ? await outbox.due(at: .distantFuture) : await outbox.due(at: now())
        for var entry in entries {
            let id = entry.transaction.id
            if inFlight.contains(id) {
                guard ignoringBackoff else { continue }
                await attemptInFlight(id)
                guard let queued = await outbox.all.first(where: { $0.transaction.id == id }), !queued.rejected,
                    !inFlight.contains(id)
                else { continue }
                entry = queued
            }
            inFlight.insert(id)
            defer {
                inFlight.remove(id)
                for waiter in waiters.removeValue(forKey: id) ?? [] { waiter.resume() }
            }
            let proof = entry.isNewPurchase ? nil : await deviceAppTransaction()
            do {
                CrashPoint.reach("beforeDelivery")
                let customer = try await server.deliver(
                    entry.transaction, appUserID: entry.appUserID, signedAppTransaction: proof,
                    authorizedAs: recipient(of: entry.appUserID))
                CrashPoint.reach("afterDelivery")
                if wantedAnswers.contains(id) { answers[id] = customer }
                await offline.learn(from: customer, at: now())
                if let beforeFinish { try await beforeFinish(entry.transaction, entry.appUserID) }
                try await backend.finish(entry.transaction)
                CrashPoint.reach("afterFinish")
                try await outbox.remove(id)
                delivered += 1
                emit(entry.restored ? .restored(entry.transaction) : .purchased(entry.transaction), for: entry.appUserID)
            } catch let error as KakinError
                where !error.isRetryable && error.code != .downloadFailed
                && !(error.code == .purchasedByAnotherAccount && !entry.isNewPurchase && proof == nil)
            {
                // Refused for good (a forged or foreign transaction): kept, reported once, never retried.
                try? await outbox.failed(id, error: error.description, retryAt: nil, now: now())
                emit(.failed(productID: entry.transaction.productID, error: PaymentError(error)), for: entry.appUserID)
            } catch {
                let retryAt = now().addingTimeInterval(retryPolicy.delay(afterAttempts: entry.attempts))
                try? await outbox.failed(id, error: "\(error)", retryAt: retryAt, now: now())
                if entry.attempts == 0 { emit(.awaitingServer(entry.transaction), for: entry.appUserID) }
            }
        }
        await scheduleRetry()
        return delivered
    }

    /// Asks the store for the device's app transaction again at the next delivery that needs it
    /// (a restore does: the customer may have signed in to another Apple Account).
    func forgetAppTransaction() {
        if case .known = appTransaction { appTransaction = .unknown }
    }

    /// The device's app transaction (``StoreBackend/appTransaction()``), asked of the store the
    /// first time a delivery needs it and kept for the session's life (until a restore); `nil`
    /// when the store has none or cannot give it now (a failure is not kept: the next delivery
    /// asks again).
    func deviceAppTransaction() async -> String? {
        switch appTransaction {
        case .known(let jws): return jws
        case .fetching(let task): return try? await task.value
        case .unknown:
            let backend = self.backend
            let task = Task { try await backend.appTransaction() }
            appTransaction = .fetching(task)
            do {
                let jws = try await task.value
                appTransaction = .known(jws)
                return jws
            } catch {
                appTransaction = .unknown
                return nil
            }
        }
    }

    /// The scheduled retry woke: from here on it delivers, and is no longer cancelled by a new schedule.
    private func retryFired() async {
        retryTask = nil
        await deliverDue()
    }

    /// Wakes the session when the earliest queued entry is due, so deliveries resume by themselves
    /// once the server is back, without waiting for the app to call anything.
    private func scheduleRetry() async {
        retryTask?.cancel()
        retryTask = nil
        // Only future retries: what is due now is being delivered by whoever holds it in flight.
        guard observer != nil || !subscribers.isEmpty, let next = await outbox.nextAttempt(after: now()) else { return }
        let sleeper = self.sleeper
        let start = now()
        retryTask = Task { [weak self] in
            do { try await sleeper.sleep(until: next, now: start) } catch { return }
            guard !Task.isCancelled else { return }
            await self?.retryFired()
        }
    }
}
