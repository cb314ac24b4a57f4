public import Foundation

/// A customer found by the dashboard's search: who, in which app, how many transactions.
public struct CustomerMatch: Hashable, Sendable {
    public var bundleID: String
    public var appUserID: String
    public var transactionCount: Int
    /// The purchase date of the customer's newest transaction.
    public var lastPurchaseDate: Date

    public init(bundleID: String, appUserID: String, transactionCount: Int, lastPurchaseDate: Date) {
        self.bundleID = bundleID
        self.appUserID = appUserID
        self.transactionCount = transactionCount
        self.lastPurchaseDate = lastPurchaseDate
    }
}

/// An App Store Server Notification the server recorded, with what became of its transaction.
public struct ReceivedNotification: Hashable, Sendable {
    public var notificationUUID: String
    public var type: String
    public var subtype: String?
    public var bundleID: String
    public var transactionID: String?
    public var receivedAt: Date
    /// The customer who owns the notification's transaction, when known.
    public var appUserID: String?
    /// When the notification's transaction was refunded or revoked, if it was.
    public var transactionRevocationDate: Date?

    public init(
        notificationUUID: String, type: String, subtype: String?, bundleID: String, transactionID: String?,
        receivedAt: Date, appUserID: String?, transactionRevocationDate: Date?
    ) {
        self.notificationUUID = notificationUUID
        self.type = type
        self.subtype = subtype
        self.bundleID = bundleID
        self.transactionID = transactionID
        self.receivedAt = receivedAt
        self.appUserID = appUserID
        self.transactionRevocationDate = transactionRevocationDate
    }
}

/// An outbox event and where its delivery to one webhook endpoint stands.
public struct WebhookDelivery: Hashable, Sendable {
    public var eventID: Int64
    public var type: String
    public var bundleID: String
    public var appUserID: String?
    public var createdAt: Date
    /// The endpoint, or `nil` when no attempt was made yet.
    public var endpoint: String?
    public var attempts: Int
    public var lastAttemptAt: Date?
    public var deliveredAt: Date?
    /// When the next attempt is due; `nil` once delivered or given up.
    public var nextAttemptAt: Date?

    public init(
        eventID: Int64, type: String, bundleID: String, appUserID: String?, createdAt: Date, endpoint: String?,
        attempts: Int, lastAttemptAt: Date?, deliveredAt: Date?, nextAttemptAt: Date?
    ) {
        self.eventID = eventID
        self.type = type
        self.bundleID = bundleID
        self.appUserID = appUserID
        self.createdAt = createdAt
        self.endpoint = endpoint
        self.attempts = attempts
        self.lastAttemptAt = lastAttemptAt
        self.deliveredAt = deliveredAt
        self.nextAttemptAt = nextAttemptAt
    }
}

/// One reconciliation run of one app, as recorded when it ended.
public struct ReconciliationRun: Hashable, Sendable {
    public var bundleID: String
    public var startedAt: Date
    public var finishedAt: Date
    public var transactionsSeen: Int
    public var transactionsRecorded: Int
    public var transactionsRevoked: Int
    /// Why the run stopped early, or `nil` when it completed.
    public var failure: String?

    public init(
        bundleID: String, startedAt: Date, finishedAt: Date, transactionsSeen: Int, transactionsRecorded: Int,
        transactionsRevoked: Int, failure: String?
    ) {
        self.bundleID = bundleID
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.transactionsSeen = transactionsSeen
        self.transactionsRecorded = transactionsRecorded
        self.transactionsRevoked = transactionsRevoked
        self.failure = failure
    }
}
