public import AppStoreModels
public import Foundation

/// What the server answered one of the App Store's `Get Retention Message` requests with, as the
/// ledger keeps it: one row per app and request (Apple's `requestIdentifier`), so a request Apple
/// sends again is recorded once.
///
/// Whether the subscriber stayed is not stored: it is worked out when the decision is read
/// (``RetentionOutcome``), from the transactions and the renewal state the ledger holds then.
public struct RetentionDecision: Hashable, Sendable {
    /// What the answer chose; its raw value is the stored text.
    public enum Choice: String, Hashable, Sendable, CaseIterable {
        /// No choice: the App Store showed the default message of the product and locale.
        case none
        /// A message uploaded to Apple.
        case message
        /// A message suggesting another subscription of the same group.
        case alternateProduct
        /// A message with a promotional offer, signed by the server.
        case promotionalOffer
    }

    /// The decision's own ID.
    public var id: String
    /// The app.
    public var bundleID: String
    /// The App Store environment that signed the request.
    public var environment: AppStoreEnvironment
    /// Apple's `requestIdentifier`: unique per app.
    public var requestIdentifier: String
    /// The subscription the request was about.
    public var originalTransactionID: String
    /// The product the subscriber would cancel.
    public var productID: String
    /// The subscriber's locale, as the App Store sent it (empty when it sent none).
    public var locale: String
    /// Where the subscriber stood (`trial`, `billingIssue` or `paid`, the raw values of the
    /// server's `RetentionSubscriberState`); `nil` when the ledger knew no such subscription.
    public var subscriberState: String?
    /// The rule that chose; `nil` when none matched.
    public var ruleName: String?
    /// What was chosen.
    public var choice: Choice
    /// The message shown; `nil` for no choice.
    public var messageID: String?
    /// The subscription suggested, for ``Choice/alternateProduct``.
    public var alternateProductID: String?
    /// The promotional offer, for ``Choice/promotionalOffer``.
    public var offerID: String?
    /// When the server answered.
    public var decidedAt: Date
    /// The end of the subscription period in effect when the server answered: the expiry of the
    /// subscription's latest transaction; `nil` when the ledger knew none.
    public var periodExpiresAt: Date?

    /// Creates a decision from its parts.
    public init(
        id: String, bundleID: String, environment: AppStoreEnvironment, requestIdentifier: String,
        originalTransactionID: String, productID: String, locale: String, subscriberState: String?,
        ruleName: String?, choice: Choice, messageID: String? = nil, alternateProductID: String? = nil,
        offerID: String? = nil, decidedAt: Date, periodExpiresAt: Date?
    ) {
        self.id = id
        self.bundleID = bundleID
        self.environment = environment
        self.requestIdentifier = requestIdentifier
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.locale = locale
        self.subscriberState = subscriberState
        self.ruleName = ruleName
        self.choice = choice
        self.messageID = messageID
        self.alternateProductID = alternateProductID
        self.offerID = offerID
        self.decidedAt = decidedAt
        self.periodExpiresAt = periodExpiresAt
    }
}

/// Whether a subscriber shown a retention answer stayed, worked out when read, from what the
/// ledger holds then (one definition for both engines: the SQL expression
/// `RetentionStatements.outcome(now:)`):
///
/// - ``stayed``: the subscription (same app, same original transaction ID) has a transaction
///   purchased after the decision that is not revoked: a renewal, the offer redeemed, or the
///   alternate product bought.
/// - ``left``: no such transaction, and either the period in effect at the decision has ended
///   (its expiry is at or before now) or the subscription's renewal state says it will not renew
///   (automatic renewal off, or an expiration intent: it expired).
/// - ``pending``: neither yet.
///
/// A later transaction turns any outcome into `stayed`: a subscriber who left and subscribed again
/// in the same subscription group counts as stayed from then on.
public enum RetentionOutcome: String, Hashable, Sendable, CaseIterable, Codable {
    /// The subscription has a later transaction.
    case stayed
    /// Its period ended, or it will not renew, with no later transaction.
    case left
    /// Not known yet.
    case pending
}

/// A decision with its outcome as read.
public struct RetentionDecisionRead: Hashable, Sendable {
    /// The decision.
    public var decision: RetentionDecision
    /// Whether the subscriber stayed, as of the read.
    public var outcome: RetentionOutcome
    /// The customer who owns the subscription (its original transaction), when the ledger knows.
    public var appUserID: String?

    /// Creates the read from its parts.
    public init(decision: RetentionDecision, outcome: RetentionOutcome, appUserID: String? = nil) {
        self.decision = decision
        self.outcome = outcome
        self.appUserID = appUserID
    }
}

/// Where a page of decisions ends, newest first: the next page starts strictly after it.
public struct RetentionDecisionCursor: Hashable, Sendable {
    /// The last decision's time.
    public var decidedAt: Date
    /// The last decision's ID.
    public var id: String

    /// The cursor after `decision`.
    public init(after decision: RetentionDecision) {
        decidedAt = decision.decidedAt
        id = decision.id
    }
}

/// The saves of one message over a range: how many times it was shown, and how many of those
/// subscribers stayed, left, or have not decided yet.
///
/// Its JSON (`messageId`, `shown`, `stayed`, `left`, `pending`, and `saveRate` when known) is what
/// the server answers for each message; ``saveRate`` is derived, and ignored when decoded.
public struct RetentionSaves: Codable, Hashable, Sendable {
    /// What ``RetentionSaves/messageID`` is for answers with no choice (the App Store's default).
    public static let defaultMessage = "default"

    /// The message ID, or ``defaultMessage`` for no choice.
    public var messageID: String
    /// Decisions that showed it.
    public var shown: Int
    /// Of those, subscribers who stayed.
    public var stayed: Int
    /// Of those, subscribers who left.
    public var left: Int
    /// Of those, subscribers not decided yet.
    public var pending: Int

    /// Creates the counts from their parts.
    public init(messageID: String, shown: Int, stayed: Int, left: Int, pending: Int) {
        self.messageID = messageID
        self.shown = shown
        self.stayed = stayed
        self.left = left
        self.pending = pending
    }

    /// Stayed over stayed and left: the share saved of the subscribers whose outcome is known;
    /// `nil` while none is.
    public var saveRate: Double? {
        stayed + left == 0 ? nil : Double(stayed) / Double(stayed + left)
    }

    private enum CodingKeys: String, CodingKey {
        case messageID = "messageId"
        case shown, stayed, left, pending, saveRate
    }

    /// Decodes the counts; a `saveRate` is derived from them, not read.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            messageID: try container.decode(String.self, forKey: .messageID),
            shown: try container.decode(Int.self, forKey: .shown),
            stayed: try container.decode(Int.self, forKey: .stayed),
            left: try container.decode(Int.self, forKey: .left),
            pending: try container.decode(Int.self, forKey: .pending))
    }

    /// Encodes the counts, and ``saveRate`` when it is known.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(messageID, forKey: .messageID)
        try container.encode(shown, forKey: .shown)
        try container.encode(stayed, forKey: .stayed)
        try container.encode(left, forKey: .left)
        try container.encode(pending, forKey: .pending)
        try container.encodeIfPresent(saveRate, forKey: .saveRate)
    }
}
