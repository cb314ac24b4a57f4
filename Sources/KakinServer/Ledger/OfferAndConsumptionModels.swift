public import AppStoreModels
public import Foundation

/// An offer signature the server made for a customer, as the ledger keeps it: the nonce it
/// carries (never made twice), who asked, and for what.
public struct OfferSignatureRecord: Codable, Hashable, Sendable {
    /// What was signed.
    public enum Kind: String, Codable, Hashable, Sendable, CaseIterable {
        /// A promotional offer (the JWS and the older signature, with one nonce).
        case promotional
        /// An introductory-offer eligibility.
        case introductoryEligibility
    }

    /// The signature's nonce, lowercased.
    public var nonce: String
    /// The app.
    public var bundleID: String
    /// The customer who asked.
    public var appUserID: String
    /// The subscription.
    public var productID: String
    /// The promotional offer; `nil` for an eligibility.
    public var offerID: String?
    /// What was signed.
    public var kind: Kind
    /// The In-App Purchase key that signed it.
    public var keyID: String
    /// When.
    public var createdAt: Date

    /// Creates a record from its parts.
    public init(
        nonce: String, bundleID: String, appUserID: String, productID: String, offerID: String?, kind: Kind,
        keyID: String, createdAt: Date
    ) {
        self.nonce = nonce
        self.bundleID = bundleID
        self.appUserID = appUserID
        self.productID = productID
        self.offerID = offerID
        self.kind = kind
        self.keyID = keyID
        self.createdAt = createdAt
    }
}

/// Apple's request for consumption information about one transaction (a CONSUMPTION_REQUEST
/// notification), and what the server did about it.
public struct ConsumptionRequestRecord: Codable, Hashable, Sendable {
    /// Where the request stands.
    public enum State: String, Codable, Hashable, Sendable, CaseIterable {
        /// Not sent yet; the reporter tries at ``ConsumptionRequestRecord/nextAttemptAt``.
        case pending
        /// Sent, and Apple accepted it.
        case sent
        /// Not sent on purpose (the app's customers did not consent, or the app has no App
        /// Store Server API key); ``ConsumptionRequestRecord/lastError`` says which.
        case skipped
        /// Given up: Apple refused it, or its 12-hour window passed.
        case failed
    }

    /// The notification that asked (one request per notification).
    public var notificationUUID: String
    /// The app.
    public var bundleID: String
    /// The transaction whose refund the customer asked for.
    public var transactionID: String
    /// The environment of the transaction.
    public var environment: AppStoreEnvironment
    /// Why the customer asked (`consumptionRequestReason`), when Apple says.
    public var reason: String?
    /// When the notification arrived.
    public var requestedAt: Date
    /// Where it stands.
    public var state: State
    /// Attempts made so far.
    public var attempts: Int
    /// When the next attempt is due (pending requests).
    public var nextAttemptAt: Date
    /// The body sent (JSON), once sent.
    public var sentBody: String?
    /// The last failure or the reason it was skipped.
    public var lastError: String?
    /// When it was sent, skipped or given up.
    public var finishedAt: Date?

    /// Creates a record from its parts.
    public init(
        notificationUUID: String, bundleID: String, transactionID: String, environment: AppStoreEnvironment,
        reason: String?, requestedAt: Date, state: State = .pending, attempts: Int = 0, nextAttemptAt: Date,
        sentBody: String? = nil, lastError: String? = nil, finishedAt: Date? = nil
    ) {
        self.notificationUUID = notificationUUID
        self.bundleID = bundleID
        self.transactionID = transactionID
        self.environment = environment
        self.reason = reason
        self.requestedAt = requestedAt
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.sentBody = sentBody
        self.lastError = lastError
        self.finishedAt = finishedAt
    }

    /// Apple asks for the information within 12 hours of the notification.
    public static let window: TimeInterval = 12 * 3600
}
