public import AppStoreModels
public import Foundation
import KakinLedger

/// Which customers the server signs an offer for.
public enum OfferEligibilityRule: String, Codable, Hashable, Sendable, CaseIterable {
    /// Every customer who asks.
    case everyone
    /// Customers who subscribed in the offer's subscription group before and have no active
    /// subscription in it now.
    case lapsedSubscribers
    /// Customers who never subscribed in the offer's subscription group.
    case neverSubscribed
    /// Customers with an active subscription in the offer's group (an offer to keep them).
    case activeSubscribers
}

/// Which offers the server signs, and for whom (`apps[].offers` in the configuration file).
public struct OfferPolicy: Hashable, Sendable {
    /// The rule of offers without a rule of their own.
    public var defaultRule: OfferEligibilityRule
    /// Rules by promotional offer ID.
    public var rules: [String: OfferEligibilityRule]

    /// Creates a policy; by default every customer may have every offer the catalog defines.
    public init(defaultRule: OfferEligibilityRule = .everyone, rules: [String: OfferEligibilityRule] = [:]) {
        self.defaultRule = defaultRule
        self.rules = rules
    }

    /// The rule of one offer.
    public func rule(for offerID: String) -> OfferEligibilityRule { rules[offerID] ?? defaultRule }
}

/// What the server tells Apple when a customer asks for a refund of a purchase
/// (`apps[].consumption`): Send Consumption Information is sent only for apps whose customers
/// consented to share their data, with the refund preference this policy gives.
public struct ConsumptionPolicy: Hashable, Sendable {
    /// Whether the app's customers consented to sharing consumption data with Apple. Without it
    /// nothing is sent: Apple requires `customerConsented` to be true.
    public var customersConsented: Bool
    /// Whether the app gives a free sample or trial, or describes the content, before purchase.
    public var sampleContentProvided: Bool
    /// Prefer `DECLINE` when the purchase was delivered and some of it was used.
    public var declineWhenUsed: Bool
    /// Prefer a refund when the customer asks within this many days of the purchase: `GRANT_FULL`
    /// when nothing was used, `GRANT_PRORATED` otherwise (unless ``declineWhenUsed``).
    public var grantWithinDays: Int?

    /// Creates a policy; by default nothing is sent (no consent).
    public init(
        customersConsented: Bool = false, sampleContentProvided: Bool = false, declineWhenUsed: Bool = false,
        grantWithinDays: Int? = nil
    ) {
        self.customersConsented = customersConsented
        self.sampleContentProvided = sampleContentProvided
        self.declineWhenUsed = declineWhenUsed
        self.grantWithinDays = grantWithinDays
    }

    /// The refund preference for a purchase made at `purchaseDate`, asked about at `now`, of
    /// which `consumption` milliunits of a percent were used (`nil` when unknown); `nil` when the
    /// policy prefers nothing.
    public func refundPreference(
        delivered: Bool, consumption: Int?, purchaseDate: Date, now: Date
    ) -> ConsumptionRequest.RefundPreference? {
        let used = (consumption ?? 0) > 0
        if declineWhenUsed, delivered, used { return .decline }
        if let days = grantWithinDays, now.timeIntervalSince(purchaseDate) <= Double(days) * 86_400 {
            return used ? .grantProrated : .grantFull
        }
        return nil
    }
}
