public import AppStoreModels
public import Foundation
public import KakinCore

/// An offer signature the server made for a customer, as the ledger keeps it: the nonce it
/// carries (never made twice), who asked, and for what.
public struct OfferSignatureRecord: Codable, Hashable, Sendable {
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
    /// What was signed: a promotional offer (the JWS and the older signature, with one nonce) or
    /// an introductory-offer eligibility.
    public var kind: OfferSignatureKind
    /// The In-App Purchase key that signed it.
    public var keyID: String
    /// When.
    public var createdAt: Date

    /// Creates a record from its parts.
    public init(
        nonce: String, bundleID: String, appUserID: String, productID: String, offerID: String?, kind: OfferSignatureKind,
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

/// A call the server owes the App Store Server API, kept in the ledger until Apple accepted it:
/// consumption information Apple asked for (a CONSUMPTION_REQUEST), or an app account token to
/// set on a purchase (Set App Account Token). Sent by ``AppleRequestSender``.
public struct AppleRequestRecord: Codable, Hashable, Sendable {
    /// What the call is.
    public enum Kind: String, Codable, Hashable, Sendable, CaseIterable {
        /// Send Consumption Information (version 2) for ``AppleRequestRecord/transactionID``.
        case consumptionInformation
        /// Set App Account Token on the purchase whose original transaction ID is
        /// ``AppleRequestRecord/transactionID``; ``AppleRequestRecord/detail`` is the token.
        case appAccountToken

        /// How long after it became owed the call is still worth making: Apple asks for
        /// consumption information within 12 hours; a token is tried for a week.
        public var window: TimeInterval {
            switch self {
            case .consumptionInformation: 12 * 3600
            case .appAccountToken: 7 * 86_400
            }
        }
    }

    /// Where the call stands.
    public enum State: String, Codable, Hashable, Sendable, CaseIterable {
        /// Not sent yet; the sender tries at ``AppleRequestRecord/nextAttemptAt``.
        case pending
        /// Sent, and Apple accepted it.
        case sent
        /// Not sent on purpose (the app's customers did not consent, or the app has no App
        /// Store Server API key); ``AppleRequestRecord/lastError`` says which.
        case skipped
        /// Given up: Apple refused it, or its window passed.
        case failed
    }

    /// The call's key: the notification's UUID for consumption information (one call per
    /// notification), `appAccountToken:<original transaction ID>:<token>` for a token.
    public var id: String
    /// What the call is.
    public var kind: Kind
    /// The app.
    public var bundleID: String
    /// The transaction the call is about (the original transaction ID for a token).
    public var transactionID: String
    /// The environment of the transaction.
    public var environment: AppStoreEnvironment
    /// Why the customer asked (`consumptionRequestReason`), or the token to set.
    public var detail: String?
    /// When the call became owed.
    public var requestedAt: Date
    /// Where it stands.
    public var state: State
    /// Attempts made so far.
    public var attempts: Int
    /// When the next attempt is due (pending calls).
    public var nextAttemptAt: Date
    /// The body sent (JSON), once sent.
    public var sentBody: String?
    /// The last failure or the reason it was skipped.
    public var lastError: String?
    /// When it was sent, skipped or given up.
    public var finishedAt: Date?

    /// Creates a record from its parts.
    public init(
        id: String, kind: Kind, bundleID: String, transactionID: String, environment: AppStoreEnvironment,
        detail: String?, requestedAt: Date, state: State = .pending, attempts: Int = 0, nextAttemptAt: Date,
        sentBody: String? = nil, lastError: String? = nil, finishedAt: Date? = nil
    ) {
        self.id = id
        self.kind = kind
        self.bundleID = bundleID
        self.transactionID = transactionID
        self.environment = environment
        self.detail = detail
        self.requestedAt = requestedAt
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.sentBody = sentBody
        self.lastError = lastError
        self.finishedAt = finishedAt
    }
}
