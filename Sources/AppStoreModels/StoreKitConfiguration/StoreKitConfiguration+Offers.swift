public import Foundation

extension StoreKitConfiguration {
    /// The introductory offer of a subscription: a free or cheaper start for customers new to the group.
    public struct IntroductoryOffer: Codable, Hashable, Sendable {
        /// Xcode's own ID for the entry.
        public var internalID: String?
        /// How the offer charges the customer.
        public var paymentMode: PaymentMode?
        /// The length of one offer period, such as `P1W`. See ``subscriptionPeriodValue``.
        public var subscriptionPeriod: String?
        /// How many periods the offer lasts (pay-as-you-go offers); one when absent.
        public var numberOfPeriods: Int?
        /// The price during the offer; absent for free trials.
        public var displayPrice: String?

        /// Creates an offer; every field defaults to absent.
        public init(
            internalID: String? = nil, paymentMode: PaymentMode? = nil, subscriptionPeriod: String? = nil,
            numberOfPeriods: Int? = nil, displayPrice: String? = nil
        ) {
            self.internalID = internalID
            self.paymentMode = paymentMode
            self.subscriptionPeriod = subscriptionPeriod
            self.numberOfPeriods = numberOfPeriods
            self.displayPrice = displayPrice
        }

        enum CodingKeys: String, CodingKey {
            case internalID
            case paymentMode
            case subscriptionPeriod
            case numberOfPeriods
            case displayPrice
        }

        /// ``displayPrice`` as an exact decimal.
        public var displayPriceValue: Decimal? { StoreKitConfiguration.decimalPrice(displayPrice) }

        /// ``subscriptionPeriod`` parsed.
        public var subscriptionPeriodValue: SubscriptionPeriod? {
            subscriptionPeriod.flatMap(SubscriptionPeriod.init(iso8601:))
        }
    }

    /// A promotional offer of a subscription, which the app signs for customers it chooses.
    public struct AdHocOffer: Codable, Hashable, Sendable {
        /// Xcode's own ID for the entry.
        public var internalID: String?
        /// The offer ID the app passes when it signs the offer.
        public var offerID: String?
        /// How the offer charges the customer.
        public var paymentMode: PaymentMode?
        /// The name developers see.
        public var referenceName: String?
        /// The length of one offer period. See ``subscriptionPeriodValue``.
        public var subscriptionPeriod: String?
        /// The price during the offer; absent for free offers.
        public var displayPrice: String?
        /// How many periods the offer lasts; one when absent.
        public var numberOfPeriods: Int?

        /// Creates an offer; every field defaults to absent.
        public init(
            internalID: String? = nil, offerID: String? = nil, paymentMode: PaymentMode? = nil,
            referenceName: String? = nil, subscriptionPeriod: String? = nil, displayPrice: String? = nil,
            numberOfPeriods: Int? = nil
        ) {
            self.internalID = internalID
            self.offerID = offerID
            self.paymentMode = paymentMode
            self.referenceName = referenceName
            self.subscriptionPeriod = subscriptionPeriod
            self.displayPrice = displayPrice
            self.numberOfPeriods = numberOfPeriods
        }

        enum CodingKeys: String, CodingKey {
            case internalID
            case offerID
            case paymentMode
            case referenceName
            case subscriptionPeriod
            case displayPrice
            case numberOfPeriods
        }

        /// ``displayPrice`` as an exact decimal.
        public var displayPriceValue: Decimal? { StoreKitConfiguration.decimalPrice(displayPrice) }

        /// ``subscriptionPeriod`` parsed.
        public var subscriptionPeriodValue: SubscriptionPeriod? {
            subscriptionPeriod.flatMap(SubscriptionPeriod.init(iso8601:))
        }
    }
}
