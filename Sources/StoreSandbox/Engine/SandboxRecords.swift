public import AppStoreModels
public import Foundation

/// The renewal state of one auto-renewable subscription (one `originalTransactionId`).
public struct SubscriptionState: Codable, Hashable, Sendable {
    /// Billing trouble at the last renewal.
    public enum BillingState: String, Codable, Hashable, Sendable {
        /// Renewals succeed.
        case ok
        /// A renewal failed; service continues until the grace period ends.
        case gracePeriod
        /// A renewal failed; the App Store keeps retrying for up to 60 days, without service.
        case billingRetry
    }

    /// The original transaction ID shared by every period of the subscription.
    public var originalTransactionID: String
    /// The tester who subscribed.
    public var testerID: String
    /// The subscription group: a customer has one subscription per group.
    public var subscriptionGroupID: String
    /// The product of the current period.
    public var productID: String
    /// The product the next period renews to (differs after a downgrade or crossgrade).
    public var autoRenewProductID: String
    /// Whether the subscription renews at the end of its period; turning it off expires it then.
    public var autoRenewEnabled: Bool
    /// Whether the last renewal was paid, or the subscription is in grace period or billing retry.
    public var billingState: BillingState
    /// When the grace period ends, while in it.
    public var gracePeriodExpiresDate: Date?
    /// Set when the subscription expired, with why.
    public var expirationIntent: ExpirationIntent?
    /// When the customer first subscribed in this group, ignoring short lapses.
    public var recentSubscriptionStartDate: Date
    /// Whether renewals fail (set by the control API) until the billing issue is resolved.
    public var billingFails: Bool
    /// Introductory or promotional offer periods still to be billed at the offer price.
    public var offerPeriodsRemaining: Int
    /// The offer those periods belong to (`nil` for the introductory offer).
    public var offerIdentifier: String?
    /// The kind of offer those periods belong to; introductory or promotional when absent
    /// (state saved before other kinds existed), as ``offerIdentifier`` says.
    public var offerType: OfferType?
    /// A price increase announced for this subscription and not yet applied by a renewal.
    public var priceIncrease: PriceIncrease?
    /// The price renewals of ``renewalPriceProductID`` charge since an increase took effect,
    /// instead of the catalog's.
    public var renewalPriceMilliunits: Int64?
    /// The product ``renewalPriceMilliunits`` applies to.
    public var renewalPriceProductID: String?
    /// The commitment in progress, for a subscription bought on a monthly plan with a 12-month
    /// commitment; `nil` for one billed up front.
    public var commitment: Commitment?
    /// The family members this subscription is shared with (Family Sharing): each member's tester
    /// ID with the original transaction ID of the member's own shared subscription. `nil` when it
    /// is shared with nobody, as in state saved before subscriptions could be shared.
    public var familyMembers: [String: String]?
    /// For a family member's shared subscription, the original transaction ID of the purchaser's
    /// subscription it follows; `nil` for a subscription the tester bought. A shared subscription
    /// never renews by itself: it renews, expires and is revoked with the purchaser's.
    public var sharedFromOriginalTransactionID: String?

    /// A price increase of a subscription, as App Store Connect announces one.
    public struct PriceIncrease: Codable, Hashable, Sendable {
        /// The product whose price rises.
        public var productID: String
        /// The new price, in milliunits of the storefront's currency.
        public var priceMilliunits: Int64
        /// Whether the customer must agree before a renewal charges the new price; without
        /// consent by the renewal date the subscription expires.
        public var requiresConsent: Bool
        /// Whether the customer agreed (always true when no consent is needed).
        public var consented: Bool
        /// When the increase was announced.
        public var announcedDate: Date

        /// Creates the state of a new subscription: renewing, billed normally, without offer periods
        /// or price increase.
        public init(
            productID: String, priceMilliunits: Int64, requiresConsent: Bool, consented: Bool, announcedDate: Date
        ) {
            self.productID = productID
            self.priceMilliunits = priceMilliunits
            self.requiresConsent = requiresConsent
            self.consented = consented
            self.announcedDate = announcedDate
        }
    }

    /// The kind of offer the remaining offer periods use.
    var currentOfferType: OfferType { offerType ?? (offerIdentifier == nil ? .introductory : .promotional) }

    /// Creates an announcement from its parts.
    public init(
        originalTransactionID: String, testerID: String, subscriptionGroupID: String, productID: String,
        startDate: Date
    ) {
        self.originalTransactionID = originalTransactionID
        self.testerID = testerID
        self.subscriptionGroupID = subscriptionGroupID
        self.productID = productID
        autoRenewProductID = productID
        autoRenewEnabled = true
        billingState = .ok
        recentSubscriptionStartDate = startDate
        billingFails = false
        offerPeriodsRemaining = 0
    }
}

/// A purchase waiting for something outside the app: a parent's approval (ask to buy) or the
/// tester finishing an interrupted purchase.
public struct PendingPurchase: Codable, Hashable, Sendable, Identifiable {
    /// Why the purchase waits.
    public enum Reason: String, Codable, Hashable, Sendable {
        /// Ask to buy: a parent must approve or decline.
        case askToBuy
        /// An interrupted purchase: the tester must complete it (a sign-in or terms to accept).
        case interrupted
    }

    /// The pending purchase's ID, which approving or declining names.
    public var id: String
    /// Why it waits.
    public var reason: Reason
    /// The payment as it was asked for, carried out as it is when approved.
    public var request: PurchaseRequest
    /// When it was asked for, on the sandbox's clock.
    public var createdAt: Date

    /// Creates a pending purchase from its parts.
    public init(id: String, reason: Reason, request: PurchaseRequest, createdAt: Date) {
        self.id = id
        self.reason = reason
        self.request = request
        self.createdAt = createdAt
    }
}

/// A payment as the device adds it to the queue.
public struct PurchaseRequest: Codable, Hashable, Sendable {
    /// The tester who buys.
    public var testerID: String
    /// The product bought.
    public var productID: String
    /// Consumables only; at least 1.
    public var quantity: Int
    /// StoreKit 2's `appAccountToken` (a UUID).
    public var appAccountToken: UUID?
    /// StoreKit 1's `applicationUsername`; stored as the account token when it is a UUID.
    public var applicationUsername: String?
    /// StoreKit 1's `simulatesAskToBuyInSandbox`.
    public var simulatesAskToBuy: Bool
    /// A promotional offer to apply.
    public var promotionalOfferID: String?
    /// A win-back offer to apply (StoreKit 2's `.winBackOffer(_:)` purchase option).
    public var winBackOfferID: String?
    /// The promotional offer's signature, which the App Store requires with ``promotionalOfferID``.
    public var promotionalOfferSignature: PromotionalOfferSignature?
    /// An introductory-offer eligibility JWS (`.introductoryOfferEligibility(compactJWS:)`): the
    /// app's server decides whether the introductory offer applies.
    public var introductoryOfferEligibilityJWS: String?
    /// What a verified ``introductoryOfferEligibilityJWS`` decided, set by the engine when it
    /// accepts the purchase; `nil` lets the App Store decide (once per subscription group).
    public internal(set) var introductoryOfferAllowed: Bool?
    /// How a subscription is billed (StoreKit 2's `.billingPlanType(_:)` purchase option):
    /// `MONTHLY` buys the product's monthly plan with a 12-month commitment; `nil` or
    /// `BILLED_UPFRONT` bills each period up front, as usual.
    public var billingPlanType: BillingPlanType?

    /// Creates a request; one unit, without token, offer, ask to buy or billing plan unless given.
    public init(
        testerID: String, productID: String, quantity: Int = 1, appAccountToken: UUID? = nil,
        applicationUsername: String? = nil, simulatesAskToBuy: Bool = false, promotionalOfferID: String? = nil,
        winBackOfferID: String? = nil, promotionalOfferSignature: PromotionalOfferSignature? = nil,
        introductoryOfferEligibilityJWS: String? = nil, billingPlanType: BillingPlanType? = nil
    ) {
        self.promotionalOfferSignature = promotionalOfferSignature
        self.introductoryOfferEligibilityJWS = introductoryOfferEligibilityJWS
        self.testerID = testerID
        self.productID = productID
        self.quantity = quantity
        self.appAccountToken = appAccountToken
        self.applicationUsername = applicationUsername
        self.simulatesAskToBuy = simulatesAskToBuy
        self.promotionalOfferID = promotionalOfferID
        self.winBackOfferID = winBackOfferID
        self.billingPlanType = billingPlanType
    }
}

/// What a purchase came to, as StoreKit reports it.
public enum PurchaseOutcome: Hashable, Sendable {
    /// Paid (or already owned: a non-consumable is never charged twice).
    case purchased(SandboxTransaction)
    /// Waiting for approval (ask to buy) or for the tester to complete an interrupted purchase.
    case deferred(PendingPurchase)
    /// Failed with StoreKit's code; `.paymentCancelled` when the user cancelled.
    case failed(StoreKitErrorCode)
}

/// Something the App Store tells the developer's server about: one Notification V2.
public struct SandboxEvent: LoggedRecord {
    /// What happened (`SUBSCRIBED`, `DID_RENEW`, `REFUND`, …).
    public var notificationType: NotificationTypeV2
    /// The detail of what happened, for the types that have one.
    public var subtype: NotificationSubtype?
    /// The transaction the notification carries; empty for notifications about no transaction
    /// (`RESCIND_CONSENT`, the `RENEWAL_EXTENSION` summary).
    public var transactionID: String
    /// The customer; empty for the `RENEWAL_EXTENSION` summary.
    public var testerID: String
    /// When it happened, on the sandbox's clock.
    public var date: Date
    /// The outcome of a mass renewal date extension, for `RENEWAL_EXTENSION` / `SUMMARY`.
    public var summary: Summary?
    /// For a subscription, its renewal info as it stood when the event happened: what the
    /// notification's `signedRenewalInfo` says, however late it is sent (`nil` for events recorded
    /// before the sandbox kept it, whose notification describes the subscription when it is sent).
    public var renewalInfo: JWSRenewalInfoDecodedPayload?
    /// For a subscription, its status when the event happened (the notification's `status`).
    public var status: SubscriptionStatus?

    /// Creates an event from its parts.
    public init(
        notificationType: NotificationTypeV2, subtype: NotificationSubtype? = nil, transactionID: String,
        testerID: String, date: Date, summary: Summary? = nil, renewalInfo: JWSRenewalInfoDecodedPayload? = nil,
        status: SubscriptionStatus? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.transactionID = transactionID
        self.testerID = testerID
        self.date = date
        self.summary = summary
        self.renewalInfo = renewalInfo
        self.status = status
    }

    /// Events are kept in order only.
    public var recordKey: String? { nil }
    public var recordGroups: [RecordGroup] { [] }
}

/// Sandbox-wide settings a test can change, like Xcode's StoreKit testing options.
public struct SandboxSettings: Codable, Hashable, Sendable {
    /// When set, every purchase fails with this code.
    public var failPurchasesWith: StoreKitErrorCode?
    /// Ask to buy for every tester.
    public var askToBuy: Bool
    /// Grace period length for billing failures (Apple: 16 days, 6 for weekly); 0 disables it.
    public var gracePeriodDays: Int
    /// Where App Store Server Notifications V2 are POSTed; `nil` keeps them queued.
    public var notificationURL: URL?

    /// Creates settings; by default purchases succeed, nobody asks to buy, the grace period is 16
    /// days and notifications stay queued.
    public init(
        failPurchasesWith: StoreKitErrorCode? = nil, askToBuy: Bool = false, gracePeriodDays: Int = 16,
        notificationURL: URL? = nil
    ) {
        self.failPurchasesWith = failPurchasesWith
        self.askToBuy = askToBuy
        self.gracePeriodDays = gracePeriodDays
        self.notificationURL = notificationURL
    }
}
