public import AppStoreModels
public import Foundation

/// What the purchase engine needs to know about a product in one storefront.
///
/// The catalog (built from `.storekit` files) produces these; the engine itself knows nothing of
/// file formats, so tests can drive it with hand-made products.
public struct SandboxProductInfo: Hashable, Sendable {
    /// A subscription offer the engine can apply.
    public struct Offer: Hashable, Sendable {
        /// The offer identifier (promotional offers); `nil` for the introductory offer.
        public var identifier: String?
        /// How the customer pays during the offer.
        public var discountType: OfferDiscountType
        /// The length of one offer period.
        public var period: SubscriptionPeriod
        /// How many periods the offer lasts.
        public var periodCount: Int
        /// The price per period, in milliunits (0 for a free trial).
        public var priceMilliunits: Int64

        /// Creates an offer from its parts.
        public init(
            identifier: String? = nil, discountType: OfferDiscountType, period: SubscriptionPeriod,
            periodCount: Int = 1,
            priceMilliunits: Int64 = 0
        ) {
            self.identifier = identifier
            self.discountType = discountType
            self.period = period
            self.periodCount = periodCount
            self.priceMilliunits = priceMilliunits
        }

        /// The offer periods billed at renewals after the first: pay-as-you-go offers bill each
        /// period; free trials and pay-up-front offers cover the whole offer with the first.
        public var remainingPeriods: Int { discountType == .payAsYouGo ? max(0, periodCount - 1) : 0 }

        /// The whole duration of the offer, from `start`.
        public func end(from start: Date) -> Date {
            var date = start
            for _ in 0..<max(1, periodCount) { date = period.advance(date) }
            return date
        }
    }

    /// An offer code's offer for a product that is not an auto-renewable subscription: the price the
    /// customer pays instead of the product's (0 for a free offer).
    public struct OneTimeOffer: Hashable, Sendable {
        /// The offer's ID, which transactions carry as `offerIdentifier`.
        public var identifier: String
        /// The price paid with the offer, in milliunits.
        public var priceMilliunits: Int64

        /// Creates a one-time offer from its parts.
        public init(identifier: String, priceMilliunits: Int64 = 0) {
            self.identifier = identifier
            self.priceMilliunits = priceMilliunits
        }
    }

    /// The product ID.
    public var id: String
    /// The kind of product.
    public var type: ProductType
    /// The price in this storefront, in milliunits of ``currency``.
    public var priceMilliunits: Int64
    /// ISO 4217 currency of the storefront.
    public var currency: String
    /// The subscription group (auto-renewable subscriptions).
    public var subscriptionGroupID: String?
    /// The level inside the group: 1 is the highest service, as in App Store Connect.
    public var groupLevel: Int?
    /// The renewal period (auto-renewable subscriptions).
    public var period: SubscriptionPeriod?
    /// The introductory offer, given once per subscription group and customer.
    public var introductoryOffer: Offer?
    /// Promotional offers, by identifier.
    public var promotionalOffers: [Offer]
    /// Win-back offers, for customers whose subscription in the group expired.
    public var winBackOffers: [Offer]
    /// Offer-code offers of a subscription, by identifier.
    public var codeOffers: [Offer]
    /// Offer-code offers of a consumable, non-consumable or non-renewing subscription.
    public var oneTimeCodeOffers: [OneTimeOffer]
    /// Whether the product is for sale in this storefront.
    public var isAvailable: Bool
    /// Whether Family Sharing is on for the product: a purchase can be shared with the buyer's
    /// family (``SandboxEngine/shareWithFamily(_:member:)``).
    public var isFamilyShareable: Bool = false

    /// Creates a product from its parts; without offers, and for sale.
    public init(
        id: String, type: ProductType, priceMilliunits: Int64, currency: String, subscriptionGroupID: String? = nil,
        groupLevel: Int? = nil, period: SubscriptionPeriod? = nil, introductoryOffer: Offer? = nil,
        promotionalOffers: [Offer] = [], winBackOffers: [Offer] = [], codeOffers: [Offer] = [],
        oneTimeCodeOffers: [OneTimeOffer] = [], isAvailable: Bool = true
    ) {
        self.id = id
        self.type = type
        self.priceMilliunits = priceMilliunits
        self.currency = currency
        self.subscriptionGroupID = subscriptionGroupID
        self.groupLevel = groupLevel
        self.period = period
        self.introductoryOffer = introductoryOffer
        self.promotionalOffers = promotionalOffers
        self.winBackOffers = winBackOffers
        self.codeOffers = codeOffers
        self.oneTimeCodeOffers = oneTimeCodeOffers
        self.isAvailable = isAvailable
    }

    /// The subscription offer of `type` with `identifier` (the introductory offer has none).
    public func offer(_ type: OfferType, identifier: String?) -> Offer? {
        switch type {
        case .introductory: introductoryOffer
        case .promotional: promotionalOffers.first { $0.identifier == identifier }
        case .winBack: winBackOffers.first { $0.identifier == identifier }
        case .offerCode: codeOffers.first { $0.identifier == identifier }
        default: nil
        }
    }
}

extension SubscriptionPeriod {
    /// `date` moved forward by one period, in UTC calendar units (a month from Jan 31 is Feb 28/29).
    public func advance(_ date: Date) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var components = DateComponents()
        switch unit {
        case .day: components.day = value
        case .week: components.day = 7 * value
        case .month: components.month = value
        case .year: components.year = value
        }
        return calendar.date(byAdding: components, to: date) ?? date.addingTimeInterval(Double(value) * 86_400)
    }
}

extension SandboxTransaction {
    /// Charges the first period of a subscription offer: its type, ID, terms and price, and the
    /// end of what the payment covers (one period when paid as you go, the whole offer otherwise).
    mutating func apply(_ offer: SandboxProductInfo.Offer, type: OfferType, from start: Date) {
        offerType = type
        offerIdentifier = offer.identifier
        offerDiscountType = offer.discountType
        offerPeriod = offer.period.iso8601
        priceMilliunits = offer.priceMilliunits
        expiresDate = offer.discountType == .payAsYouGo ? offer.period.advance(start) : offer.end(from: start)
    }
}
