public import AppStoreModels
public import Foundation
public import KakinLedger

/// What the HTTP routes and the dashboard read from the ledger, and the hosted content they keep
/// in it: they reach the ledger through the service only.
extension PurchaseService {
    /// A page of a customer's transactions, newest first, strictly after `cursor`.
    public func transactions(
        bundleID: String, appUserID: String, limit: Int, after cursor: TransactionCursor?
    ) async throws -> [RecordedTransaction] {
        try await customers.transactions(bundleID: bundleID, appUserID: appUserID, limit: limit, after: cursor)
    }

    /// An app's figures for the UTC days numbered `days`, as the ledger keeps them with each
    /// write, and its subscriptions active before them and at `now`.
    public func dailyFigures(bundleID: String, days: Range<Int>, now: Date) async throws -> DailyFiguresPeriod {
        try await figures.dailyFigures(bundleID: bundleID, days: days, now: now)
    }

    /// Customers whose app user ID starts with `query`, or who own a transaction with that ID; of
    /// one app when `bundleID` is given.
    public func findCustomers(
        matching query: String, limit: Int, bundleID: String? = nil
    ) async throws -> [CustomerMatch] {
        try await customers.findCustomers(matching: query, limit: limit, bundleID: bundleID)
    }

    /// What happened around a customer, or around every customer when `appUserID` is `nil`:
    /// notifications received, webhook deliveries and the app downloads linked to them.
    public func activity(
        bundleID: String?, appUserID: String?, limit: Int
    ) async throws -> (
        notifications: [ReceivedNotification], deliveries: [WebhookDelivery],
        downloads: [(appTransactionID: String, linkedAt: Date)]
    ) {
        let notifications = try await purchases.receivedNotifications(bundleID: bundleID, appUserID: appUserID, limit: limit)
        let deliveries = try await outbox.webhookDeliveries(bundleID: bundleID, appUserID: appUserID, limit: limit)
        guard let bundleID, let appUserID else { return (notifications, deliveries, []) }
        return (notifications, deliveries, try await customers.appTransactions(bundleID: bundleID, appUserID: appUserID))
    }

    /// The server's own work: the newest `runs` reconciliation runs, and the newest `limit` calls
    /// owed to Apple and offer signatures; of one app when `bundleID` is given.
    public func operations(runs: Int, limit: Int, bundleID: String? = nil) async throws -> (
        runs: [ReconciliationRun], calls: [AppleRequestRecord], offers: [OfferSignatureRecord]
    ) {
        (
            try await upkeep.reconciliationRuns(bundleID: bundleID, limit: runs),
            try await appleCalls.appleRequests(bundleID: bundleID, limit: limit),
            try await appleCalls.offerSignatures(bundleID: bundleID, limit: limit)
        )
    }

    /// A reconciliation run by its ID.
    public func reconciliationRun(id: Int64) async throws -> ReconciliationRun? {
        try await upkeep.reconciliationRun(id: id)
    }

    /// A recorded transaction by its ID.
    public func transaction(id: String) async throws -> RecordedTransaction? {
        try await purchases.transaction(id: id)
    }

    /// A page of an app's subscriptions in one environment whose period ended at or after `start`
    /// and before `end` with nothing recorded since, strictly after `cursor`
    /// (the ledger's `PurchaseLedger.lapsedSubscriptions`).
    public func lapsedSubscriptions(
        bundleID: String, environment: AppStoreEnvironment, endedFrom start: Date, before end: Date,
        after cursor: LapsedSubscription?, limit: Int
    ) async throws -> [LapsedSubscription] {
        try await purchases.lapsedSubscriptions(
            bundleID: bundleID, environment: environment, endedFrom: start, before: end, after: cursor, limit: limit)
    }

    /// Stores a content package's bytes and metadata.
    public func putContent(_ package: ContentPackage, bytes: Data) async throws {
        try await upkeep.putContent(package, bytes: bytes)
    }

    /// The latest version of a product's content package and its bytes.
    public func latestContent(bundleID: String, productID: String) async throws -> (ContentPackage, Data)? {
        try await upkeep.latestContent(bundleID: bundleID, productID: productID)
    }
}
