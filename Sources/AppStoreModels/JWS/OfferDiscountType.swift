/// How an offer charges the customer during its period.
public struct OfferDiscountType: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Nothing is charged during the offer.
    public static let freeTrial = Self(rawValue: "FREE_TRIAL")
    /// A reduced price is charged every billing period of the offer.
    public static let payAsYouGo = Self(rawValue: "PAY_AS_YOU_GO")
    /// A reduced price is charged once for the whole offer.
    public static let payUpFront = Self(rawValue: "PAY_UP_FRONT")
    /// A single charge for a one-time purchase offer.
    public static let oneTime = Self(rawValue: "ONE_TIME")

    public static let knownValues: [Self] = [.freeTrial, .payAsYouGo, .payUpFront, .oneTime]
}
