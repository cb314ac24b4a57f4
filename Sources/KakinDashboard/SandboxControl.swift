public import Foundation
import KakinServer

/// What the dashboard's transaction manager needs from a sandbox App Store running in the same
/// process (`kakin serve`): a view of its state and the actions Xcode's transaction manager has.
///
/// The server does not depend on the sandbox: whoever embeds both adapts the sandbox's engine to
/// this protocol and passes it in ``ServerDependencies/sandboxControl``. Without one, the
/// dashboard has no transaction manager.
public protocol SandboxControl: Sendable {
    /// The sandbox's testers, transactions, subscriptions, clock, settings and sent notifications.
    func state() async throws -> SandboxControlState
    /// Performs one action; answers a sentence saying what was done. A refusal (an unknown
    /// transaction, a pending purchase already decided) throws an error whose description says why.
    func perform(_ action: SandboxControlAction) async throws -> String
}

/// One thing the transaction manager can do to the sandbox.
public enum SandboxControlAction: Hashable, Sendable {
    case createTester(name: String, storefront: String)
    case setStorefront(testerID: String, storefront: String)
    case setAskToBuy(testerID: String, enabled: Bool)
    case clearPurchaseHistory(testerID: String)
    /// `reason`: 0 (other) or 1 (a problem in the app), as Apple's `revocationReason`.
    case refund(transactionID: String, reason: Int)
    case revoke(transactionID: String)
    case approve(pendingID: String)
    case decline(pendingID: String)
    case renew(originalTransactionID: String)
    case failRenewals(originalTransactionID: String)
    case resolveBilling(originalTransactionID: String)
    case advanceClock(seconds: Double)
    /// Sandbox seconds per real second; 0 stops the clock.
    case setClockRate(Double)
    case updateSettings(SandboxControlState.Settings)
    /// Revokes the sandbox's `leaf` or `intermediate` certificate; the sandbox issues new ones
    /// under the same root and signs with them from then on.
    case revokeCertificate(kind: String)
}

/// A snapshot of the sandbox for the transaction manager's pages.
public struct SandboxControlState: Hashable, Sendable {
    public struct Tester: Hashable, Sendable {
        public var id: String
        public var name: String
        public var storefront: String
        public var asksToBuy: Bool
        public var canMakePayments: Bool
        public init(id: String, name: String, storefront: String, asksToBuy: Bool, canMakePayments: Bool) {
            self.id = id
            self.name = name
            self.storefront = storefront
            self.asksToBuy = asksToBuy
            self.canMakePayments = canMakePayments
        }
    }

    public struct Transaction: Hashable, Sendable {
        public var id: String
        public var originalID: String
        public var testerID: String
        public var productID: String
        public var productType: String
        public var purchaseDate: Date
        public var expiresDate: Date?
        public var revocationDate: Date?
        public init(
            id: String, originalID: String, testerID: String, productID: String, productType: String,
            purchaseDate: Date, expiresDate: Date?, revocationDate: Date?
        ) {
            self.id = id
            self.originalID = originalID
            self.testerID = testerID
            self.productID = productID
            self.productType = productType
            self.purchaseDate = purchaseDate
            self.expiresDate = expiresDate
            self.revocationDate = revocationDate
        }
    }

    public struct PendingPurchase: Hashable, Sendable {
        public var id: String
        public var testerID: String
        public var productID: String
        /// Why it waits: ask to buy, or an interrupted purchase.
        public var reason: String
        public init(id: String, testerID: String, productID: String, reason: String) {
            self.id = id
            self.testerID = testerID
            self.productID = productID
            self.reason = reason
        }
    }

    public struct Subscription: Hashable, Sendable {
        public var originalTransactionID: String
        public var testerID: String
        public var productID: String
        public var expiresDate: Date?
        public var autoRenewEnabled: Bool
        /// Where billing stands, in words (`ok`, `grace period`, `billing retry`, `expired`).
        public var billingState: String
        /// Whether renewals are set to fail.
        public var billingFails: Bool
        public init(
            originalTransactionID: String, testerID: String, productID: String, expiresDate: Date?,
            autoRenewEnabled: Bool, billingState: String, billingFails: Bool
        ) {
            self.originalTransactionID = originalTransactionID
            self.testerID = testerID
            self.productID = productID
            self.expiresDate = expiresDate
            self.autoRenewEnabled = autoRenewEnabled
            self.billingState = billingState
            self.billingFails = billingFails
        }
    }

    public struct Settings: Hashable, Sendable {
        public var askToBuy: Bool
        public var gracePeriodDays: Int
        /// The StoreKit error code every purchase fails with, or `nil`.
        public var failPurchasesWith: Int?
        public var notificationURL: String?
        public init(askToBuy: Bool, gracePeriodDays: Int, failPurchasesWith: Int?, notificationURL: String?) {
            self.askToBuy = askToBuy
            self.gracePeriodDays = gracePeriodDays
            self.failPurchasesWith = failPurchasesWith
            self.notificationURL = notificationURL
        }
    }

    public struct SentNotification: Hashable, Sendable {
        public var uuid: String
        public var type: String
        public var subtype: String?
        public var transactionID: String
        public var attempts: Int
        /// Whether the last attempt succeeded.
        public var delivered: Bool
        public var nextAttemptDate: Date?
        public init(
            uuid: String, type: String, subtype: String?, transactionID: String, attempts: Int, delivered: Bool,
            nextAttemptDate: Date?
        ) {
            self.uuid = uuid
            self.type = type
            self.subtype = subtype
            self.transactionID = transactionID
            self.attempts = attempts
            self.delivered = delivered
            self.nextAttemptDate = nextAttemptDate
        }
    }

    /// One of the sandbox's signing certificates.
    public struct Certificate: Hashable, Sendable {
        /// `root`, `intermediate` or `leaf`.
        public var kind: String
        public var subject: String
        /// The serial number in hexadecimal.
        public var serialNumber: String
        public var notValidAfter: Date
        /// When it was revoked; `nil` for a certificate in use.
        public var revocationDate: Date?
        public init(kind: String, subject: String, serialNumber: String, notValidAfter: Date, revocationDate: Date?) {
            self.kind = kind
            self.subject = subject
            self.serialNumber = serialNumber
            self.notValidAfter = notValidAfter
            self.revocationDate = revocationDate
        }
    }

    public var now: Date
    /// Sandbox seconds per real second; `nil` when the clock is stopped.
    public var clockRate: Double?
    public var settings: Settings
    public var testers: [Tester]
    /// Newest first.
    public var transactions: [Transaction]
    public var pending: [PendingPurchase]
    public var subscriptions: [Subscription]
    /// Newest first.
    public var notifications: [SentNotification]
    /// The certificates in use (root, intermediate, leaf), then those revoked, newest first.
    public var certificates: [Certificate]

    public init(
        now: Date, clockRate: Double?, settings: Settings, testers: [Tester], transactions: [Transaction],
        pending: [PendingPurchase], subscriptions: [Subscription], notifications: [SentNotification],
        certificates: [Certificate] = []
    ) {
        self.now = now
        self.clockRate = clockRate
        self.settings = settings
        self.testers = testers
        self.transactions = transactions
        self.pending = pending
        self.subscriptions = subscriptions
        self.notifications = notifications
        self.certificates = certificates
    }
}
