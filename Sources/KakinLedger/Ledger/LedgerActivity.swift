public import Foundation

/// A customer found by the dashboard's search: who, in which app, how many transactions.
public struct CustomerMatch: Hashable, Sendable {
    /// The app the customer uses.
    public var bundleID: String
    /// The customer's ID, as the app knows them.
    public var appUserID: String
    /// How many transactions the ledger holds for the customer in this app.
    public var transactionCount: Int
    /// The purchase date of the customer's newest transaction.
    public var lastPurchaseDate: Date

    /// Creates a match from its parts.
    public init(bundleID: String, appUserID: String, transactionCount: Int, lastPurchaseDate: Date) {
        self.bundleID = bundleID
        self.appUserID = appUserID
        self.transactionCount = transactionCount
        self.lastPurchaseDate = lastPurchaseDate
    }
}

/// An App Store Server Notification the server recorded, with what became of its transaction.
public struct ReceivedNotification: Hashable, Sendable {
    /// Apple's `notificationUUID`, which identifies the notification across Apple's retries.
    public var notificationUUID: String
    /// Its `notificationType` (`DID_RENEW`, `REFUND`, …).
    public var type: String
    /// Its `subtype`, when it has one.
    public var subtype: String?
    /// The app it is about.
    public var bundleID: String
    /// The transaction it carried; `nil` for a notification without one (`TEST`, a summary).
    public var transactionID: String?
    /// When the server received it.
    public var receivedAt: Date
    /// The customer who owns the notification's transaction, when known.
    public var appUserID: String?
    /// When the notification's transaction was refunded or revoked, if it was.
    public var transactionRevocationDate: Date?

    /// Creates a notification's row from its parts.
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
    /// The event's ID in the outbox, increasing as events are written.
    public var eventID: Int64
    /// The event's type (`transaction.recorded`, `transaction.revoked`, …).
    public var type: String
    /// The app the event is about.
    public var bundleID: String
    /// The customer the event is about, when there is one (an anonymous one redacted, see
    /// ``LedgerEvent/appUserID``).
    public var appUserID: String?
    /// When the event was written.
    public var createdAt: Date
    /// The endpoint, or `nil` when no attempt was made yet.
    public var endpoint: String?
    /// How many times it was posted to the endpoint.
    public var attempts: Int
    /// When it was last posted; `nil` before the first attempt.
    public var lastAttemptAt: Date?
    /// When the endpoint accepted it; `nil` until then.
    public var deliveredAt: Date?
    /// When the next attempt is due; `nil` once delivered or given up.
    public var nextAttemptAt: Date?

    /// Creates a delivery's row from its parts.
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

/// What reconciliation did: what it read from Apple and what it changed in the ledger.
public struct ReconciliationCounts: Codable, Hashable, Sendable {
    /// Notifications read from Apple's notification history.
    public var notificationsRead: Int = 0
    /// Of those, the ones the server had not handled before.
    public var notificationsNew: Int = 0
    /// Subscriptions whose status was asked for: their period ended and no event said what
    /// happened next.
    public var subscriptionsChecked: Int = 0
    /// Purchases whose whole transaction history was asked for.
    public var historiesRead: Int = 0
    /// Signed transactions Apple returned that verified.
    public var transactionsSeen: Int = 0
    /// Transactions the ledger did not have before.
    public var transactionsRecorded: Int = 0
    /// Transactions found refunded or revoked that the ledger had not yet revoked.
    public var transactionsRevoked: Int = 0

    /// Nothing done yet.
    public init() {}

    /// The counts, in the order they are declared.
    var values: [Int] {
        [
            notificationsRead, notificationsNew, subscriptionsChecked, historiesRead, transactionsSeen,
            transactionsRecorded, transactionsRevoked,
        ]
    }

    /// Counts given in the order they are declared.
    init(values: [Int]) {
        (notificationsRead, notificationsNew, subscriptionsChecked) = (values[0], values[1], values[2])
        (historiesRead, transactionsSeen, transactionsRecorded) = (values[3], values[4], values[5])
        transactionsRevoked = values[6]
    }

    /// Both counts added up.
    public static func + (lhs: Self, rhs: Self) -> Self {
        Self(values: zip(lhs.values, rhs.values).map(+))
    }
}

/// One reconciliation run of one app: recorded when it starts, its counts brought up to date as
/// it goes, and its end. As JSON, the counts sit beside the other fields.
public struct ReconciliationRun: Codable, Hashable, Sendable {
    /// Where a run is.
    public enum State: String, Codable, Hashable, Sendable {
        /// Going on now (or its server stopped before it ended: see ``ReconciliationRun/updatedAt``).
        case running
        /// Ended having done everything.
        case completed
        /// Stopped early; ``ReconciliationRun/failure`` says why.
        case failed
    }

    /// The run's number, unique in the ledger.
    public var id: Int64
    /// The app reconciled.
    public var bundleID: String
    /// Where the run is.
    public var state: State
    /// When the run started.
    public var startedAt: Date
    /// When its counts were last brought up to date.
    public var updatedAt: Date
    /// When it ended, completed or not; `nil` while it runs.
    public var finishedAt: Date?
    /// What it did so far.
    public var counts = ReconciliationCounts()
    /// Why the run stopped early, or `nil`.
    public var failure: String?

    /// A run of `bundleID` that starts at `date`, with nothing done yet; the ledger gives it its ``id``.
    public init(id: Int64 = 0, bundleID: String, startedAt date: Date) {
        self.id = id
        self.bundleID = bundleID
        state = .running
        startedAt = date
        updatedAt = date
    }

    enum CodingKeys: String, CodingKey {
        case id
        case bundleID = "bundleId"
        case state, startedAt, updatedAt, finishedAt, failure
    }

    /// Reads a run from the JSON ``encode(to:)`` writes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        bundleID = try container.decode(String.self, forKey: .bundleID)
        state = try container.decode(State.self, forKey: .state)
        startedAt = try container.decode(Date.self, forKey: .startedAt)
        updatedAt = try container.decode(Date.self, forKey: .updatedAt)
        finishedAt = try container.decodeIfPresent(Date.self, forKey: .finishedAt)
        failure = try container.decodeIfPresent(String.self, forKey: .failure)
        counts = try ReconciliationCounts(from: decoder)
    }

    /// Writes the run as one JSON object, its counts beside its other fields.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(bundleID, forKey: .bundleID)
        try container.encode(state, forKey: .state)
        try container.encode(startedAt, forKey: .startedAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encodeIfPresent(finishedAt, forKey: .finishedAt)
        try container.encodeIfPresent(failure, forKey: .failure)
        try counts.encode(to: encoder)
    }
}

/// One attempt to deliver an event to an endpoint.
public struct DeliveryAttempt: Hashable, Sendable {
    /// The event attempted.
    public var eventID: Int64
    /// Whether the endpoint accepted it (a 2xx answer).
    public var delivered: Bool
    /// When it was attempted.
    public var date: Date
    /// When to try again after a failure; `nil` gives up.
    public var retryAt: Date?

    /// Creates an attempt's record from its parts.
    public init(eventID: Int64, delivered: Bool, at date: Date, retryAt: Date?) {
        self.eventID = eventID
        self.delivered = delivered
        self.date = date
        self.retryAt = retryAt
    }
}

/// What ``LedgerStore/alias(bundleID:anonymousID:to:transfersOwnership:at:)`` did.
public enum CustomerAliasOutcome: Hashable, Sendable {
    /// The anonymous customer is (now, or since an earlier call) an alias of the identified one;
    /// what this call moved. Also the answer, with a move that changed nothing, for an anonymous
    /// ID the app's ledger has never seen: then no alias is recorded.
    case aliased(CustomerAliasMove)
    /// The anonymous ID became another identified customer before: nothing was changed.
    case aliasedToAnotherCustomer(String)
}

/// What one alias call moved from the anonymous customer to the identified one. A call that
/// repeats an alias made before moves nothing (unless something reached the anonymous ID since).
public struct CustomerAliasMove: Hashable, Sendable {
    /// Whether the alias was recorded by this call (false: it was recorded before, or the
    /// anonymous ID was never seen and nothing was recorded).
    public var created: Bool
    /// The anonymous customer's transactions that now belong to the identified customer.
    public var transactionIDs: [String]
    /// The anonymous customer's balances, added to the identified customer's, by currency.
    public var balances: [String: Int64]
    /// Purchases (original transaction IDs) that another identified customer held part of and
    /// that moved too, because the app's transfer policy moves purchases to who restores them.
    public var transferredPurchases: [String]
    /// Purchases another identified customer held part of and keeps: those customers' transactions
    /// stayed where they were (the app keeps purchases with their first owner).
    public var keptPurchases: [String]

    /// Whether the call changed anything.
    public var changedAnything: Bool {
        created || !transactionIDs.isEmpty || !balances.isEmpty || !transferredPurchases.isEmpty
    }

    /// Creates a move from its parts.
    public init(
        created: Bool, transactionIDs: [String] = [], balances: [String: Int64] = [:],
        transferredPurchases: [String] = [], keptPurchases: [String] = []
    ) {
        self.created = created
        self.transactionIDs = transactionIDs
        self.balances = balances
        self.transferredPurchases = transferredPurchases
        self.keptPurchases = keptPurchases
    }
}

/// What a stored dashboard token is.
public enum DashboardTokenKind: String, Sendable {
    /// A signed-in session.
    case session
    /// A sign-in form that was posted (each form signs in once).
    case usedSignInForm
}

/// Instants as the ledger stores them: whole milliseconds since 1970-01-01 UTC in a `BIGINT`.
enum LedgerTime {
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
