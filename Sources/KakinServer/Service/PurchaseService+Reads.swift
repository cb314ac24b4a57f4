public import Foundation
public import KakinLedger

/// What the HTTP routes and the dashboard read from the ledger, and the hosted content they keep
/// in it: they reach the ledger through the service only.
extension PurchaseService {
    /// A page of a customer's transactions, newest first, strictly after `cursor`.
    public func transactions(
        bundleID: String, appUserID: String, limit: Int, after cursor: TransactionCursor?
    ) async throws -> [RecordedTransaction] {
        try await store.transactions(bundleID: bundleID, appUserID: appUserID, limit: limit, after: cursor)
    }

    /// An app's figures for the UTC days numbered `days`, as the ledger keeps them with each
    /// write, and its subscriptions active before them and at `now`.
    public func dailyFigures(bundleID: String, days: Range<Int>, now: Date) async throws -> DailyFiguresPeriod {
        try await store.dailyFigures(bundleID: bundleID, days: days, now: now)
    }

    /// Customers whose app user ID starts with `query`, or who own a transaction with that ID; of
    /// one app when `bundleID` is given.
    public func findCustomers(
        matching query: String, limit: Int, bundleID: String? = nil
    ) async throws -> [CustomerMatch] {
        try await store.findCustomers(matching: query, limit: limit, bundleID: bundleID)
    }

    /// What happened around a customer, or around every customer when `appUserID` is `nil`:
    /// notifications received, webhook deliveries and the app downloads linked to them.
    public func activity(
        bundleID: String?, appUserID: String?, limit: Int
    ) async throws -> (
        notifications: [ReceivedNotification], deliveries: [WebhookDelivery],
        downloads: [(appTransactionID: String, linkedAt: Date)]
    ) {
        let notifications = try await store.receivedNotifications(bundleID: bundleID, appUserID: appUserID, limit: limit)
        let deliveries = try await store.webhookDeliveries(bundleID: bundleID, appUserID: appUserID, limit: limit)
        guard let bundleID, let appUserID else { return (notifications, deliveries, []) }
        return (notifications, deliveries, try await store.appTransactions(bundleID: bundleID, appUserID: appUserID))
    }

    /// The server's own work: the newest `runs` reconciliation runs, and the newest `limit` calls
    /// owed to Apple and offer signatures; of one app when `bundleID` is given.
    public func operations(runs: Int, limit: Int, bundleID: String? = nil) async throws -> (
        runs: [ReconciliationRun], calls: [AppleRequestRecord], offers: [OfferSignatureRecord]
    ) {
        (
            try await store.reconciliationRuns(bundleID: bundleID, limit: runs),
            try await store.appleRequests(bundleID: bundleID, limit: limit),
            try await store.offerSignatures(bundleID: bundleID, limit: limit)
        )
    }

    /// Stores a content package's bytes and metadata.
    public func putContent(_ package: ContentPackage, bytes: Data) async throws {
        try await store.putContent(package, bytes: bytes)
    }

    /// The latest version of a product's content package and its bytes.
    public func latestContent(bundleID: String, productID: String) async throws -> (ContentPackage, Data)? {
        try await store.latestContent(bundleID: bundleID, productID: productID)
    }
}
