import AppStoreModels
public import Foundation
import Synchronization

/// The local App Store's engine: testers, purchases, subscriptions and refunds, on an injected clock.
///
/// Drive it in-process from tests, or through the sandbox's HTTP APIs. Every change is saved to the
/// state store before a call returns, so a restart loses nothing.
public actor SandboxEngine {
    /// Looks a product up for a storefront (country code); `nil` when the catalog has no such product.
    public typealias ProductLookup = @Sendable (_ productID: String, _ storefront: String) -> SandboxProductInfo?
    /// Looks up the monthly plan with a 12-month commitment of a product in a storefront (country
    /// code); `nil` when the product is sold only up front there.
    public typealias CommitmentPlanLookup =
        @Sendable (_ productID: String, _ storefront: String) -> SandboxCommitmentPlan?

    /// Signs what the engine hands out, with the authority's current leaf: after a certificate is
    /// revoked (``revokeCertificate(_:)``), everything signed next uses the new leaf.
    public nonisolated var signer: SandboxSigner { certificates.withLock { $0.signer } }
    /// The sandbox clock.
    public nonisolated let clock: SandboxClock
    /// The real clock, for certificates and OCSP answers: verifiers check those against real
    /// time, whatever the sandbox clock says.
    public nonisolated let realClock: @Sendable () -> Date
    /// How long an OCSP answer stays fresh (`nextUpdate` − `thisUpdate`).
    public nonisolated let ocspValidity: TimeInterval
    /// The current signer and the responder switch, read without waiting for the actor.
    nonisolated let certificates: Mutex<CertificateState>
    /// Where the certificate authority is kept, so that rotations survive a restart; `nil` keeps
    /// them in memory.
    nonisolated let authorityDirectory: URL?
    let products: ProductLookup
    let commitmentPlans: CommitmentPlanLookup
    let store: any SandboxStateStore
    let storefrontIDs: [String: String]
    var state: SandboxState
    /// Long-polling callers waiting for the next update.
    var updateWaiters: [UUID: CheckedContinuation<Void, Never>] = [:]

    /// Creates an engine, reading saved state from `store`.
    ///
    /// - Parameters:
    ///   - storefrontIDs: Apple storefront IDs by country code, written into transactions.
    ///   - authorityDirectory: the directory the signer's authority was loaded from; a rotation
    ///     after a revocation is written back there. `nil` keeps rotations in memory.
    ///   - realClock: the real time, for certificates and OCSP answers; injected by tests.
    ///   - ocspValidity: how long an OCSP answer stays fresh.
    ///   - commitmentPlans: the products sold on a monthly plan with a 12-month commitment; none
    ///     by default.
    public init(
        signer: SandboxSigner, clock: SandboxClock, store: any SandboxStateStore = MemoryStateStore(),
        storefrontIDs: [String: String] = [:], authorityDirectory: URL? = nil,
        realClock: @escaping @Sendable () -> Date = { Date() }, ocspValidity: TimeInterval = 3_600,
        commitmentPlans: @escaping CommitmentPlanLookup = { _, _ in nil }, products: @escaping ProductLookup
    ) throws(SandboxError) {
        certificates = Mutex(CertificateState(signer: signer))
        self.authorityDirectory = authorityDirectory
        self.realClock = realClock
        self.ocspValidity = ocspValidity
        self.clock = clock
        self.store = store
        self.storefrontIDs = storefrontIDs
        self.products = products
        self.commitmentPlans = commitmentPlans
        do { state = try store.load() ?? SandboxState() } catch {
            throw SandboxError(.stateUnavailable, "\(error)")
        }
    }

    /// A copy of the whole state, for inspection.
    public var snapshot: SandboxState { state }

    func save() throws(SandboxError) {
        do { try store.save(state) } catch {
            throw SandboxError(.stateUnavailable, "cannot save the sandbox state: \(error)")
        }
        state.clearJournal()
    }

    // MARK: - Testers

    /// Creates a tester in `storefront`.
    @discardableResult
    public func createTester(
        name: String, storefront: String = "USA", id: String? = nil
    ) throws(SandboxError)
        -> SandboxTester
    {
        let identifier = id ?? UUID().uuidString.lowercased()
        guard state.testers[identifier] == nil else {
            throw SandboxError(.invalidRequest, "a tester with ID \(identifier) exists already")
        }
        let tester = SandboxTester(id: identifier, name: name, storefront: storefront, createdAt: clock.now())
        state.testers[identifier] = tester
        try save()
        return tester
    }

    /// All testers, by creation date.
    public func testers() -> [SandboxTester] {
        state.testers.values.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// One tester.
    public func tester(_ id: String) throws(SandboxError) -> SandboxTester {
        guard let tester = state.testers[id] else { throw SandboxError(.unknownTester, "no tester has ID \(id)") }
        return tester
    }

    /// Replaces a tester's settings (storefront, parental restriction, interruptions, ask to buy).
    public func updateTester(_ tester: SandboxTester) throws(SandboxError) {
        guard state.testers[tester.id] != nil else {
            throw SandboxError(.unknownTester, "no tester has ID \(tester.id)")
        }
        state.testers[tester.id] = tester
        try save()
    }

    /// Deletes a tester and everything they bought.
    public func deleteTester(_ id: String) throws(SandboxError) {
        _ = try tester(id)
        state.testers[id] = nil
        removeHistory(of: id)
        try save()
    }

    /// Clears a tester's purchase history, as if the account were new: the same account can run the
    /// same test again.
    public func clearPurchaseHistory(of id: String) throws(SandboxError) {
        _ = try tester(id)
        removeHistory(of: id)
        try save()
    }

    private func removeHistory(of testerID: String) {
        state.transactions.removeAll(in: .tester(testerID))
        state.subscriptions.removeAll { $1.testerID == testerID }
        state.pendingPurchases.removeAll { $1.request.testerID == testerID }
        state.appDownloads[testerID] = nil
        state.updates.removeAll(in: .tester(testerID))
    }

    // MARK: - Settings

    /// The sandbox-wide settings.
    public var settings: SandboxSettings { state.settings }

    /// Changes the sandbox-wide settings.
    public func updateSettings(_ settings: SandboxSettings) throws(SandboxError) {
        state.settings = settings
        try save()
    }

    /// Changes only the settings the update names, and answers the settings as they are now.
    @discardableResult
    public func updateSettings(_ update: SandboxSettingsUpdate) throws(SandboxError) -> SandboxSettings {
        if let days = update.gracePeriodDays, days < 0 {
            throw SandboxError(.invalidRequest, "gracePeriodDays must be 0 or more, not \(days)")
        }
        state.settings = update.applied(to: state.settings)
        try save()
        return state.settings
    }

    // MARK: - Queries

    /// A transaction by ID.
    public func transaction(_ id: String) throws(SandboxError) -> SandboxTransaction {
        guard let transaction = state.transactions[id] else {
            throw SandboxError(.unknownTransaction, "no transaction has ID \(id)")
        }
        return transaction
    }

    /// A tester's transactions, oldest first.
    public func transactions(of testerID: String) -> [SandboxTransaction] {
        state.transactions.records(in: .tester(testerID))
    }

    /// Transactions the app has not finished yet (StoreKit's `Transaction.unfinished`).
    public func unfinishedTransactions(of testerID: String) -> [SandboxTransaction] {
        transactions(of: testerID).filter { !$0.isFinished && !$0.isRevoked }
    }

    /// What the tester is entitled to now (`Transaction.currentEntitlements`): non-consumables and
    /// non-renewing subscriptions not refunded, and the latest transaction of each subscription that
    /// is active or in its grace period.
    public func currentEntitlements(of testerID: String) -> [SandboxTransaction] {
        let now = clock.now()
        var latestByOriginal: [String: SandboxTransaction] = [:]
        var result: [SandboxTransaction] = []
        for transaction in transactions(of: testerID) {
            switch transaction.productType {
            case .consumable: continue
            case .autoRenewableSubscription:
                if let current = latestByOriginal[transaction.originalID],
                    current.purchaseDate > transaction.purchaseDate
                {
                    continue
                }
                latestByOriginal[transaction.originalID] = transaction
            default:
                if transaction.entitles(at: now) { result.append(transaction) }
            }
        }
        for transaction in latestByOriginal.values.sorted(by: { $0.id < $1.id }) {
            let inGrace =
                state.subscriptions[transaction.originalID].map {
                    $0.billingState == .gracePeriod && ($0.gracePeriodExpiresDate ?? now) > now
                } ?? false
            if !transaction.isRevoked, !transaction.isUpgraded, transaction.entitles(at: now) || inGrace {
                result.append(transaction)
            }
        }
        return result
    }

    /// What "restore purchases" returns: every non-consumable and subscription transaction (SK1's
    /// `restoreCompletedTransactions`); consumables are never restored.
    public func restorableTransactions(of testerID: String) -> [SandboxTransaction] {
        transactions(of: testerID).filter { $0.productType != .consumable }
    }

    /// Notifications recorded so far, oldest first.
    public func events() -> [SandboxEvent] { state.events.elements }

    /// Removes and returns the notifications recorded so far, for delivery.
    public func takeEvents() throws(SandboxError) -> [SandboxEvent] {
        let events = state.events.elements
        guard !events.isEmpty else { return [] }
        state.events.removeAll()
        try save()
        return events
    }

    /// Records an event for its notification. A subscription's renewal info and status are taken
    /// now, so that the notification reports the state the event left, even when later events
    /// change it before the notifications are sent: callers store the subscription's new state first.
    func record(_ type: NotificationTypeV2, _ subtype: NotificationSubtype? = nil, _ transaction: SandboxTransaction) {
        var event = SandboxEvent(
            notificationType: type, subtype: subtype, transactionID: transaction.id, testerID: transaction.testerID,
            date: clock.now())
        if transaction.productType == .autoRenewableSubscription, state.subscriptions[transaction.originalID] != nil {
            event.renewalInfo = try? renewalInfo(originalTransactionID: transaction.originalID)
            event.status = try? status(originalTransactionID: transaction.originalID)
        }
        state.events.append(event)
    }
}

extension SandboxEngine {
    /// Forgets everything: testers, transactions, notifications and settings. The CA and the
    /// catalog stay; transaction numbering goes on, so IDs are never reused.
    public func resetAll() throws(SandboxError) {
        state.removeAll()
        try save()
    }
}
