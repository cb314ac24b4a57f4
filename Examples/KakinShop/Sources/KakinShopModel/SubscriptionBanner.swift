public import Foundation
public import Kakin

/// What the shop tells a subscriber about their subscription, read from the purchase server's
/// answer: a billing problem first (it needs the customer to act), then a free trial, then a
/// subscription that will not renew, then a regular renewal.
///
/// A pure function of the customer, the entitlement's name and the time, so that every state can
/// be drawn in a preview and checked in a test without a store.
public enum SubscriptionBanner: Hashable, Sendable {
    /// Nothing to say: no such entitlement, or an answer computed on the device while the server
    /// could not be reached, which carries none of the renewal facts (showing nothing beats a guess).
    case none
    /// A free trial that ends at `endsAt`; `willRenew` is `false` once the customer turned
    /// automatic renewal off, so the subscription stops with the trial.
    case trial(endsAt: Date, willRenew: Bool)
    /// The App Store could not charge for the renewal and keeps trying; access continues until
    /// `until` (the billing grace period). The customer should update their payment method.
    case gracePeriod(until: Date, since: Date)
    /// The App Store could not charge for the renewal, and access has stopped (no grace period, or
    /// it is over) while it keeps trying. The customer must update their payment method.
    case billingIssue(since: Date)
    /// Active until `endsAt`, and then it stops: automatic renewal is off.
    case willNotRenew(endsAt: Date)
    /// Active, and renews on `on`.
    case renews(on: Date)
    /// The subscription lapsed, was refunded, or the App Store gave up charging.
    case expired

    /// The banner for `customer`'s entitlement `identifier` (such as `premium`) at `date`.
    ///
    /// Access is decided by ``CustomerInfo/isEntitled(to:at:)``, the SDK's own rule, which also
    /// ends an answer kept past its subscription's expiry and keeps a failed renewal until its
    /// grace period ends; the renewal facts (`willRenew`, `periodType`, `billingIssueDetectedAt`,
    /// `gracePeriodExpiresAt`) come from the server, which learns them from the App Store's
    /// notifications.
    public init(customer: CustomerInfo?, entitlement identifier: String, at date: Date) {
        guard let customer, !customer.isProvisional,
            let entitlement = Self.entitlement(identifier, of: customer)
        else {
            self = .none
            return
        }
        let isEntitled = customer.isEntitled(to: identifier, at: date)
        if let since = entitlement.billingIssueDetectedAt {
            if isEntitled, let grace = entitlement.gracePeriodExpiresAt, grace > date {
                self = .gracePeriod(until: grace, since: since)
            } else {
                self = .billingIssue(since: since)
            }
            return
        }
        guard isEntitled else {
            self = .expired
            return
        }
        guard let end = entitlement.expiresDate else {
            // An entitlement that does not expire is not a subscription: nothing to say.
            self = .none
            return
        }
        if entitlement.periodType == .trial {
            self = .trial(endsAt: end, willRenew: entitlement.willRenew != false)
        } else if entitlement.willRenew == false {
            self = .willNotRenew(endsAt: end)
        } else {
            self = .renews(on: end)
        }
    }

    /// The entitlement named `identifier` that speaks for the customer: an active one before an
    /// inactive one (two products of a group may grant the same name), then the one ending last.
    static func entitlement(_ identifier: String, of customer: CustomerInfo) -> CustomerInfo.Entitlement? {
        customer.entitlements.filter { $0.identifier == identifier }.max { lhs, rhs in
            if lhs.isActive != rhs.isActive { return !lhs.isActive }
            return (lhs.expiresDate ?? .distantPast) < (rhs.expiresDate ?? .distantPast)
        }
    }

    /// Whether the customer should act now: update their payment method in the App Store's
    /// subscription settings (``ShopModel/manageSubscriptions()``).
    public var needsAction: Bool {
        switch self {
        case .gracePeriod, .billingIssue: true
        default: false
        }
    }

    /// The banner's words, in English; dates in `locale` and `timeZone`.
    public func message(locale: Locale = .current, timeZone: TimeZone = .current) -> String? {
        func day(_ date: Date) -> String {
            var style = Date.FormatStyle(date: .long, time: .omitted)
            style.locale = locale
            style.timeZone = timeZone
            return date.formatted(style)
        }
        switch self {
        case .none:
            return nil
        case .trial(let end, let willRenew):
            return willRenew
                ? "Your free trial ends on \(day(end)); then your subscription starts."
                : "Your free trial ends on \(day(end)). Your subscription will not start."
        case .gracePeriod(let until, _):
            return "We could not renew your subscription. Update your payment method by \(day(until)) to keep Premium."
        case .billingIssue:
            return "Premium is paused: update your payment method to continue."
        case .willNotRenew(let end):
            return "Premium ends on \(day(end))."
        case .renews(let date):
            return "Premium renews on \(day(date))."
        case .expired:
            return "Premium has expired."
        }
    }
}
