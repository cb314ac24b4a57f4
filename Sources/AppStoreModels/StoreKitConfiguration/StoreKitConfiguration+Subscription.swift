public import Foundation

extension StoreKitConfiguration {
    /// An auto-renewable subscription in a `.storekit` file.
    public struct Subscription: Codable, Hashable, Sendable {
        /// The promotional offers, which the app signs for chosen customers.
        public var adHocOffers: [AdHocOffer]?
        /// The offers redeemed with an offer code.
        public var codeOffers: [SubscriptionOffer]?
        /// The price of one period as written in the file, such as `"9.99"`. See ``displayPriceValue``.
        public var displayPrice: String?
        /// Whether Family Sharing is on for the subscription.
        public var familyShareable: Bool?
        /// The level within the group; 1 is the highest, and moving to a lower number is an upgrade.
        public var groupNumber: Int?
        /// Xcode's own ID for the entry.
        public var internalID: String?
        /// The offer for customers new to the group, if any.
        public var introductoryOffer: IntroductoryOffer?
        /// The name and description per locale.
        public var localizations: [Localization]?
        /// The product ID the app asks for.
        public var productID: String?
        /// The length of one period, such as `P1M`. See ``recurringSubscriptionPeriodValue``.
        public var recurringSubscriptionPeriod: String?
        /// The name developers see.
        public var referenceName: String?
        /// The ID of the group, the same as the enclosing ``SubscriptionGroup/id``.
        public var subscriptionGroupID: String?
        /// The kind of product, always ``ProductType/recurringSubscription``.
        public var type: ProductType?
        /// The win-back offers for customers whose subscription lapsed.
        public var winbackOffers: [SubscriptionOffer]?

        /// Creates a subscription; every field defaults to absent.
        public init(
            adHocOffers: [AdHocOffer]? = nil, codeOffers: [SubscriptionOffer]? = nil, displayPrice: String? = nil,
            familyShareable: Bool? = nil, groupNumber: Int? = nil, internalID: String? = nil,
            introductoryOffer: IntroductoryOffer? = nil, localizations: [Localization]? = nil,
            productID: String? = nil, recurringSubscriptionPeriod: String? = nil, referenceName: String? = nil,
            subscriptionGroupID: String? = nil, type: ProductType? = nil, winbackOffers: [SubscriptionOffer]? = nil
        ) {
            self.adHocOffers = adHocOffers
            self.codeOffers = codeOffers
            self.displayPrice = displayPrice
            self.familyShareable = familyShareable
            self.groupNumber = groupNumber
            self.internalID = internalID
            self.introductoryOffer = introductoryOffer
            self.localizations = localizations
            self.productID = productID
            self.recurringSubscriptionPeriod = recurringSubscriptionPeriod
            self.referenceName = referenceName
            self.subscriptionGroupID = subscriptionGroupID
            self.type = type
            self.winbackOffers = winbackOffers
        }

        enum CodingKeys: String, CodingKey {
            case adHocOffers
            case codeOffers
            case displayPrice
            case familyShareable
            case groupNumber
            case internalID
            case introductoryOffer
            case localizations
            case productID
            case recurringSubscriptionPeriod
            case referenceName
            case subscriptionGroupID
            case type
            case winbackOffers
        }

        /// ``displayPrice`` as an exact decimal, or `nil` when it is absent or not a plain number.
        public var displayPriceValue: Decimal? { StoreKitConfiguration.decimalPrice(displayPrice) }

        /// ``recurringSubscriptionPeriod`` parsed, or `nil` when absent or not understood.
        public var recurringSubscriptionPeriodValue: SubscriptionPeriod? {
            recurringSubscriptionPeriod.flatMap(SubscriptionPeriod.init(iso8601:))
        }
    }
}
