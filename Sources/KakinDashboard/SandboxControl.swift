public import Foundation
import KakinServer
import KakinLedger

/// What the dashboard's transaction manager needs from a sandbox App Store running in the same
/// process (`kakin serve`): a view of its state and the actions Xcode's transaction manager has.
///
/// The server does not depend on the sandbox: whoever embeds both adapts the sandbox's engine to
/// this protocol and hands it to ``KakinServer/ServerDependencies/addDashboard(sandbox:sandboxApp:)``. Without
/// one, the dashboard has no transaction manager.
public protocol SandboxControl: Sendable {
    /// The sandbox's testers, transactions, subscriptions, clock, settings and sent notifications.
    func state() async throws -> SandboxControlState
    /// Performs one action; answers a sentence saying what was done. A refusal (an unknown
    /// transaction, a pending purchase already decided) throws an error whose description says why.
    func perform(_ action: SandboxControlAction) async throws -> String
}

/// One thing the transaction manager can do to the sandbox.
public enum SandboxControlAction: Hashable, Sendable {
    /// Creates a sandbox tester named `name` who buys in `storefront` (ISO 3166-1 alpha-3, `USA`).
    case createTester(name: String, storefront: String)
    /// Moves a tester to another storefront; their later purchases are priced and signed there.
    case setStorefront(testerID: String, storefront: String)
    /// Turns ask to buy on or off for one tester: with it on, their purchases wait for approval.
    case setAskToBuy(testerID: String, enabled: Bool)
    /// Forgets every purchase of a tester, so that the same products can be bought again.
    case clearPurchaseHistory(testerID: String)
    /// `reason`: 0 (other) or 1 (a problem in the app), as Apple's `revocationReason`.
    case refund(transactionID: String, reason: Int)
    /// Revokes a transaction without a refund (as when family sharing stops); the sandbox sends `REVOKE`.
    case revoke(transactionID: String)
    /// Approves a purchase waiting for ask to buy or after an interruption: it completes now.
    case approve(pendingID: String)
    /// Declines a waiting purchase: it ends as failed, as StoreKit reports a declined ask to buy.
    case decline(pendingID: String)
    /// Renews the subscription with this original transaction ID now, without waiting for its expiry.
    case renew(originalTransactionID: String)
    /// Makes the subscription's renewals fail, to play a billing problem (grace period, then billing retry).
    case failRenewals(originalTransactionID: String)
    /// Ends a subscription's billing problem: in grace period or billing retry, it renews at once.
    case resolveBilling(originalTransactionID: String)
    /// Moves the sandbox's clock forward by `seconds`, then renews or expires what fell due meanwhile.
    case advanceClock(seconds: Double)
    /// Sandbox seconds per real second; 0 stops the clock.
    case setClockRate(Double)
    /// Replaces the sandbox's settings with these.
    case updateSettings(SandboxControlState.Settings)
    /// Revokes the sandbox's `leaf` or `intermediate` certificate; the sandbox issues new ones
    /// under the same root and signs with them from then on.
    case revokeCertificate(kind: String)
}

/// A snapshot of the sandbox for the transaction manager's pages.
public struct SandboxControlState: Hashable, Sendable {
    /// A sandbox account that buys: the App Store's test user.
    public struct Tester: Hashable, Sendable {
        /// The tester's identifier, used in actions and in the sandbox's API.
        public var id: String
        /// The name given when the tester was created.
        public var name: String
        /// The storefront the tester buys in (ISO 3166-1 alpha-3, `USA`).
        public var storefront: String
        /// Whether the tester's purchases wait for approval (ask to buy).
        public var asksToBuy: Bool
        /// Whether the tester may buy at all (`false` plays parental controls that forbid purchases).
        public var canMakePayments: Bool
        /// Creates a tester's row from its parts.
        public init(id: String, name: String, storefront: String, asksToBuy: Bool, canMakePayments: Bool) {
            self.id = id
            self.name = name
            self.storefront = storefront
            self.asksToBuy = asksToBuy
            self.canMakePayments = canMakePayments
        }
    }

    /// A transaction the sandbox signed: a purchase, a renewal or a restore.
    public struct Transaction: Hashable, Sendable {
        /// The transaction ID.
        public var id: String
        /// The original transaction ID, shared by a purchase and its renewals and restores.
        public var originalID: String
        /// The tester who bought.
        public var testerID: String
        /// The product bought.
        public var productID: String
        /// The product's type as Apple writes it in transactions (`Consumable`, `Auto-Renewable Subscription`, …).
        public var productType: String
        /// When the sandbox charged for it, on the sandbox's clock.
        public var purchaseDate: Date
        /// When the period it pays for ends (subscriptions); `nil` for other products.
        public var expiresDate: Date?
        /// When it was refunded or revoked; `nil` when it stands.
        public var revocationDate: Date?
        /// Creates a transaction's row from its parts.
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

    /// A purchase that waits for a decision: ask to buy, or an interrupted purchase.
    public struct PendingPurchase: Hashable, Sendable {
        /// The pending purchase's identifier, which ``SandboxControlAction/approve(pendingID:)`` and
        /// ``SandboxControlAction/decline(pendingID:)`` name.
        public var id: String
        /// The tester who asked to buy.
        public var testerID: String
        /// The product asked for.
        public var productID: String
        /// Why it waits: ask to buy, or an interrupted purchase.
        public var reason: String
        /// Creates a pending purchase's row from its parts.
        public init(id: String, testerID: String, productID: String, reason: String) {
            self.id = id
            self.testerID = testerID
            self.productID = productID
            self.reason = reason
        }
    }

    /// An auto-renewable subscription of a tester, named by its original transaction ID.
    public struct Subscription: Hashable, Sendable {
        /// The original transaction ID shared by every period of the subscription.
        public var originalTransactionID: String
        /// The tester who subscribed.
        public var testerID: String
        /// The product of the current period.
        public var productID: String
        /// When the latest period ends; `nil` before one was bought.
        public var expiresDate: Date?
        /// Whether the subscription renews at the end of its period.
        public var autoRenewEnabled: Bool
        /// Where billing stands, in words (`ok`, `grace period`, `billing retry`, `expired`).
        public var billingState: String
        /// Whether renewals are set to fail.
        public var billingFails: Bool
        /// Creates a subscription's row from its parts.
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

    /// The sandbox's settings the transaction manager can change.
    public struct Settings: Hashable, Sendable {
        /// Ask to buy for every tester: each purchase waits for approval.
        public var askToBuy: Bool
        /// How many days a subscription whose renewal failed keeps its access (0: no grace period).
        public var gracePeriodDays: Int
        /// The StoreKit error code every purchase fails with, or `nil`.
        public var failPurchasesWith: Int?
        /// Where the sandbox posts its App Store Server Notifications; `nil` keeps them queued.
        public var notificationURL: String?
        /// Creates settings from their parts.
        public init(askToBuy: Bool, gracePeriodDays: Int, failPurchasesWith: Int?, notificationURL: String?) {
            self.askToBuy = askToBuy
            self.gracePeriodDays = gracePeriodDays
            self.failPurchasesWith = failPurchasesWith
            self.notificationURL = notificationURL
        }
    }

    /// An App Store Server Notification the sandbox sent, or is about to send.
    public struct SentNotification: Hashable, Sendable {
        /// The notification's `notificationUUID`, the same on every attempt.
        public var uuid: String
        /// Its `notificationType` (`DID_RENEW`, `REFUND`, …).
        public var type: String
        /// Its `subtype`, when it has one (`INITIAL_BUY`, `GRACE_PERIOD`, …).
        public var subtype: String?
        /// The transaction it is about.
        public var transactionID: String
        /// How many times it was posted so far.
        public var attempts: Int
        /// Whether the last attempt succeeded.
        public var delivered: Bool
        /// When it is posted again; `nil` when it was delivered or no attempt is left.
        public var nextAttemptDate: Date?
        /// Creates a notification's row from its parts.
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
        /// The certificate's subject, as a distinguished name.
        public var subject: String
        /// The serial number in hexadecimal.
        public var serialNumber: String
        /// When the certificate expires.
        public var notValidAfter: Date
        /// When it was revoked; `nil` for a certificate in use.
        public var revocationDate: Date?
        /// Creates a certificate's row from its parts.
        public init(kind: String, subject: String, serialNumber: String, notValidAfter: Date, revocationDate: Date?) {
            self.kind = kind
            self.subject = subject
            self.serialNumber = serialNumber
            self.notValidAfter = notValidAfter
            self.revocationDate = revocationDate
        }
    }

    /// The sandbox's current time, which may run ahead of the real clock.
    public var now: Date
    /// Sandbox seconds per real second; `nil` when the clock is stopped.
    public var clockRate: Double?
    /// The settings as they are now.
    public var settings: Settings
    /// Every tester.
    public var testers: [Tester]
    /// The latest transactions, newest first.
    public var transactions: [Transaction]
    /// The purchases waiting for a decision, oldest first.
    public var pending: [PendingPurchase]
    /// Every auto-renewable subscription of every tester.
    public var subscriptions: [Subscription]
    /// The latest notifications, newest first.
    public var notifications: [SentNotification]
    /// The certificates in use (root, intermediate, leaf), then those revoked, newest first.
    public var certificates: [Certificate]

    /// Creates a snapshot from its parts.
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
