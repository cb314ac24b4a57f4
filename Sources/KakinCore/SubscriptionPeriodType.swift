/// Which kind of period of an auto-renewable subscription a transaction pays for: a free trial,
/// an introductory or another offer, or the regular price.
///
/// The ledger keeps it with each subscription transaction (its raw value is the stored text) and
/// the server answers it in each entitlement (`Entitlement.PeriodType`, the same type), so a
/// purchase's period type is never converted between the two.
public enum SubscriptionPeriodType: String, Codable, Hashable, Sendable, CaseIterable {
    /// A free trial (an offer whose discount is `FREE_TRIAL`).
    case trial
    /// A paid introductory offer (pay as you go or pay up front).
    case intro
    /// A promotional, offer code or win-back offer that is not a free trial.
    case offer
    /// A period at the subscription's regular price.
    case normal
}
