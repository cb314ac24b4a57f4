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

        /// The whole duration of the offer, from `start`.
        public func end(from start: Date) -> Date {
            var date = start
            for _ in 0..<max(1, periodCount) { date = period.advance(date) }
            return date
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
    /// Whether the product is for sale in this storefront.
    public var isAvailable: Bool

    public init(
        id: String, type: ProductType, priceMilliunits: Int64, currency: String, subscriptionGroupID: String? = nil,
        groupLevel: Int? = nil, period: SubscriptionPeriod? = nil, introductoryOffer: Offer? = nil,
        promotionalOffers: [Offer] = [], isAvailable: Bool = true
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
        self.isAvailable = isAvailable
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
