public import AppStoreModels
public import Foundation

extension LocalizedProduct {
    /// What an auto-renewable subscription shows, as StoreKit 2's `Product.SubscriptionInfo`.
    public struct SubscriptionInfo: Codable, Hashable, Sendable {
        /// The subscription group's ID.
        public var subscriptionGroupID: String
        /// The group's name in the storefront's language, or its reference name when it has none.
        public var subscriptionGroupDisplayName: String?
        /// The level within the group; 1 is the highest, and moving to a lower number is an upgrade.
        public var groupLevel: Int
        /// The length of one period as ISO 8601, such as `P1M`. See ``subscriptionPeriodValue``.
        public var subscriptionPeriod: String
        /// The offer for customers new to the group, if any.
        public var introductoryOffer: Offer?
        /// The promotional offers, which the app signs for customers it chooses.
        public var promotionalOffers: [Offer]
        /// The win-back offers, for customers whose subscription lapsed (StoreKit 2's `winBackOffers`).
        public var winBackOffers: [Offer]

        /// Creates subscription information.
        public init(
            subscriptionGroupID: String, subscriptionGroupDisplayName: String?, groupLevel: Int,
            subscriptionPeriod: String, introductoryOffer: Offer?, promotionalOffers: [Offer],
            winBackOffers: [Offer] = []
        ) {
            self.subscriptionGroupID = subscriptionGroupID
            self.subscriptionGroupDisplayName = subscriptionGroupDisplayName
            self.groupLevel = groupLevel
            self.subscriptionPeriod = subscriptionPeriod
            self.introductoryOffer = introductoryOffer
            self.promotionalOffers = promotionalOffers
            self.winBackOffers = winBackOffers
        }

        enum CodingKeys: String, CodingKey {
            case subscriptionGroupID
            case subscriptionGroupDisplayName
            case groupLevel
            case subscriptionPeriod
            case introductoryOffer
            case promotionalOffers
            case winBackOffers
        }

        /// Reads subscription information; `winBackOffers` defaults to none, as older answers lack it.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            subscriptionGroupID = try container.decode(String.self, forKey: .subscriptionGroupID)
            subscriptionGroupDisplayName = try container.decodeIfPresent(
                String.self, forKey: .subscriptionGroupDisplayName)
            groupLevel = try container.decode(Int.self, forKey: .groupLevel)
            subscriptionPeriod = try container.decode(String.self, forKey: .subscriptionPeriod)
            introductoryOffer = try container.decodeIfPresent(Offer.self, forKey: .introductoryOffer)
            promotionalOffers = try container.decode([Offer].self, forKey: .promotionalOffers)
            winBackOffers = try container.decodeIfPresent([Offer].self, forKey: .winBackOffers) ?? []
        }

        /// ``subscriptionPeriod`` parsed.
        public var subscriptionPeriodValue: SubscriptionPeriod? { SubscriptionPeriod(iso8601: subscriptionPeriod) }
    }

    /// A subscription offer with its price in the storefront's currency, as StoreKit 2's
    /// `Product.SubscriptionOffer` and StoreKit 1's `SKProductDiscount`.
    public struct Offer: Codable, Hashable, Sendable {
        /// The offer ID of a promotional offer; `nil` for the introductory offer.
        public var id: String?
        /// Whether the offer is introductory or promotional.
        public var type: OfferKind
        /// How the offer charges: free trial, pay as you go, or pay up front.
        public var paymentMode: StoreKitConfiguration.PaymentMode
        /// The length of one offer period as ISO 8601, such as `P1W`.
        public var period: String
        /// How many periods the offer lasts.
        public var periodCount: Int
        /// The price during the offer in the storefront's currency; zero for a free trial.
        public var price: Decimal
        /// ``price`` formatted for the storefront, such as `$0.00` or `¥300`.
        public var displayPrice: String

        /// Creates an offer.
        public init(
            id: String?, type: OfferKind, paymentMode: StoreKitConfiguration.PaymentMode, period: String,
            periodCount: Int, price: Decimal, displayPrice: String
        ) {
            self.id = id
            self.type = type
            self.paymentMode = paymentMode
            self.period = period
            self.periodCount = periodCount
            self.price = price
            self.displayPrice = displayPrice
        }

        enum CodingKeys: String, CodingKey {
            case id
            case type
            case paymentMode
            case period
            case periodCount
            case price
            case displayPrice
        }

        /// ``period`` parsed.
        public var periodValue: SubscriptionPeriod? { SubscriptionPeriod(iso8601: period) }
    }

    /// The kind of a subscription offer.
    public enum OfferKind: String, Codable, Hashable, Sendable, CaseIterable {
        /// For customers new to the subscription group.
        case introductory
        /// Signed by the app for customers it chooses.
        case promotional
        /// For customers whose subscription lapsed.
        case winBack
        /// Redeemed with an offer code.
        case offerCode
    }
}
