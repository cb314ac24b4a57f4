public import Foundation
public import KakinCore

/// One access right of a customer (`removeAds`, `premium`), derived from their transactions by
/// the purchase server's grants: the one entitlement type of the server, its API and the SDK.
///
/// On the wire (``CustomerAnswer``) its keys are `identifier`, `productId`, `isActive`,
/// `expiresDate`, `revocationDate`, `transactionId` and `originalTransactionId`, and for
/// auto-renewable subscriptions `willRenew`, `periodType`, `billingIssueDetectedAt` and
/// `gracePeriodExpiresAt`, `environment` (`Production` or `Sandbox`: which App Store granted
/// it), `store` (`appStore` or `stripe`: where the customer paid), and `consentRescindedDate`
/// when a parent withdrew consent for the customer; dates as
/// integer milliseconds since 1970, whatever the coder's date strategy. An answer or cache written
/// before the subscription keys, the environment or the consent existed still decodes, with them
/// `nil`.
public struct Entitlement: Codable, Hashable, Sendable {
    /// Which kind of period of a subscription the entitlement's transaction pays for (a free trial,
    /// an introductory or another offer, or the regular price): the type the ledger keeps.
    public typealias PeriodType = SubscriptionPeriodType

    /// The App Store environment of the purchase that grants an entitlement.
    public enum Environment: String, Codable, Hashable, Sendable, CaseIterable {
        /// The App Store: a customer paid.
        case production = "Production"
        /// The sandbox: a sandbox account (a tester, TestFlight, App Review) bought it without paying.
        case sandbox = "Sandbox"
        /// Xcode's local StoreKit testing.
        case xcode = "Xcode"
        /// StoreKit testing in Xcode with a local configuration.
        case localTesting = "LocalTesting"
    }

    /// The name the app checks (`removeAds`, `premium`).
    public var identifier: String
    /// The product that grants it.
    public var productID: String
    /// Whether it grants access now (when the answer was made).
    public var isActive: Bool
    /// When it lapses (subscriptions); `nil` when it does not expire.
    public var expiresDate: Date?
    /// When the purchase was refunded or revoked, if it was.
    public var revocationDate: Date?
    /// The transaction that gives (or last gave) it.
    public var transactionID: String
    /// The original transaction ID of that transaction, shared by its renewals and restores.
    public var originalTransactionID: String
    /// Whether the subscription renews at the end of its period: `false` once the customer turned
    /// auto-renewal off or the subscription ended for good. `nil` for entitlements that are not
    /// subscriptions.
    public var willRenew: Bool?
    /// The kind of period the entitlement's transaction pays for (a free trial, an introductory or
    /// another offer, or the regular price). `nil` for entitlements that are not subscriptions,
    /// and when the server does not know (transactions it recorded before it kept this).
    public var periodType: PeriodType?
    /// When the App Store first reported that it could not charge for the renewal; `nil` while
    /// billing is fine (it is cleared when the subscription renews again) and for entitlements
    /// that are not subscriptions. The moment to ask the customer to update their payment method.
    public var billingIssueDetectedAt: Date?
    /// When the billing grace period of a failed renewal ends: until then the entitlement stays
    /// active while the App Store retries the charge. `nil` without a billing issue, or when the
    /// app's subscriptions have no grace period.
    public var gracePeriodExpiresAt: Date?
    /// Which App Store environment granted the entitlement: `sandbox` for a purchase made with a
    /// sandbox account (a tester, TestFlight, App Review), which costs nothing. `nil` when the
    /// server did not say (an answer or a cache written before it did).
    public var environment: Environment?
    /// When a parent withdrew consent for the customer's use of the app (the App Store's
    /// `RESCIND_CONSENT`, for a minor under the age-assurance rules): while it stands, the
    /// entitlement is inactive whatever its purchase says, and this says why. `nil` when consent
    /// stands (or was given again: a new purchase after the withdrawal).
    public var consentRescindedDate: Date?
    /// Where the customer paid for the purchase that gives it: the App Store, or the app's web
    /// checkout (Stripe). It decides where the customer manages it (Apple's subscription settings,
    /// or the web). `nil` when the server did not say (an answer or a cache written before it did).
    public var store: PurchaseStore?

    /// Creates an entitlement.
    public init(
        identifier: String, productID: String, isActive: Bool, expiresDate: Date? = nil, revocationDate: Date? = nil,
        transactionID: String, originalTransactionID: String, willRenew: Bool? = nil, periodType: PeriodType? = nil,
        billingIssueDetectedAt: Date? = nil, gracePeriodExpiresAt: Date? = nil, environment: Environment? = nil,
        consentRescindedDate: Date? = nil, store: PurchaseStore? = nil
    ) {
        self.store = store
        self.identifier = identifier
        self.productID = productID
        self.isActive = isActive
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.willRenew = willRenew
        self.periodType = periodType
        self.billingIssueDetectedAt = billingIssueDetectedAt
        self.gracePeriodExpiresAt = gracePeriodExpiresAt
        self.environment = environment
        self.consentRescindedDate = consentRescindedDate
    }

    enum CodingKeys: String, CodingKey {
        case identifier, productId, isActive, expiresDate, revocationDate, transactionId, originalTransactionId
        case willRenew, periodType, billingIssueDetectedAt, gracePeriodExpiresAt, environment, consentRescindedDate
        case store
    }

    /// The keys an SDK's device cache used before entitlements had one type (dates in the coder's
    /// own strategy): still read, so that a cache written then is not lost.
    enum EarlierCacheKeys: String, CodingKey {
        case productID, transactionID, expiresDate, revocationDate
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        identifier = try container.decode(String.self, forKey: .identifier)
        isActive = try container.decode(Bool.self, forKey: .isActive)
        guard container.contains(.productId) else {
            let earlier = try decoder.container(keyedBy: EarlierCacheKeys.self)
            productID = try earlier.decode(String.self, forKey: .productID)
            transactionID = try earlier.decode(String.self, forKey: .transactionID)
            originalTransactionID = transactionID
            expiresDate = try earlier.decodeIfPresent(Date.self, forKey: .expiresDate)
            revocationDate = try earlier.decodeIfPresent(Date.self, forKey: .revocationDate)
            return
        }
        productID = try container.decode(String.self, forKey: .productId)
        transactionID = try container.decode(String.self, forKey: .transactionId)
        originalTransactionID = try container.decode(String.self, forKey: .originalTransactionId)
        expiresDate = try container.decodeIfPresent(Int64.self, forKey: .expiresDate).map(
            KakinJSON.date(epochMilliseconds:))
        revocationDate = try container.decodeIfPresent(Int64.self, forKey: .revocationDate)
            .map(KakinJSON.date(epochMilliseconds:))
        willRenew = try container.decodeIfPresent(Bool.self, forKey: .willRenew)
        // A period type a later server adds reads as unknown rather than failing the whole answer.
        periodType = try container.decodeIfPresent(String.self, forKey: .periodType).flatMap(PeriodType.init(rawValue:))
        billingIssueDetectedAt = try container.decodeIfPresent(Int64.self, forKey: .billingIssueDetectedAt)
            .map(KakinJSON.date(epochMilliseconds:))
        gracePeriodExpiresAt = try container.decodeIfPresent(Int64.self, forKey: .gracePeriodExpiresAt)
            .map(KakinJSON.date(epochMilliseconds:))
        // An environment a later App Store adds reads as unknown rather than failing the answer.
        environment = try container.decodeIfPresent(String.self, forKey: .environment).flatMap(
            Environment.init(rawValue:))
        consentRescindedDate = try container.decodeIfPresent(Int64.self, forKey: .consentRescindedDate)
            .map(KakinJSON.date(epochMilliseconds:))
        // A store a later server adds reads as unknown rather than failing the answer.
        store = try container.decodeIfPresent(String.self, forKey: .store).flatMap(PurchaseStore.init(rawValue:))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(productID, forKey: .productId)
        try container.encode(isActive, forKey: .isActive)
        try container.encodeIfPresent(expiresDate.map(KakinJSON.epochMilliseconds), forKey: .expiresDate)
        try container.encodeIfPresent(revocationDate.map(KakinJSON.epochMilliseconds), forKey: .revocationDate)
        try container.encode(transactionID, forKey: .transactionId)
        try container.encode(originalTransactionID, forKey: .originalTransactionId)
        try container.encodeIfPresent(willRenew, forKey: .willRenew)
        try container.encodeIfPresent(periodType, forKey: .periodType)
        try container.encodeIfPresent(
            billingIssueDetectedAt.map(KakinJSON.epochMilliseconds), forKey: .billingIssueDetectedAt)
        try container.encodeIfPresent(
            gracePeriodExpiresAt.map(KakinJSON.epochMilliseconds), forKey: .gracePeriodExpiresAt)
        try container.encodeIfPresent(environment, forKey: .environment)
        try container.encodeIfPresent(
            consentRescindedDate.map(KakinJSON.epochMilliseconds), forKey: .consentRescindedDate)
        try container.encodeIfPresent(store, forKey: .store)
    }
}
