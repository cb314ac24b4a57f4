public import Foundation

extension StoreKitConfiguration {
    /// An offer-code or win-back offer of a subscription.
    ///
    /// Xcode's keys for these offers are not documented and vary between versions, so the common
    /// ones are typed and every other key is kept in ``otherFields`` and written back unchanged.
    public struct SubscriptionOffer: Codable, Hashable, Sendable {
        /// Xcode's own ID for the entry.
        public var internalID: String?
        /// The offer's ID.
        public var offerID: String?
        /// The name developers see.
        public var referenceName: String?
        /// How the offer charges the customer.
        public var paymentMode: PaymentMode?
        /// The length of one offer period. See ``subscriptionPeriodValue``.
        public var subscriptionPeriod: String?
        /// How many periods the offer lasts.
        public var numberOfPeriods: Int?
        /// The price during the offer.
        public var displayPrice: String?
        /// Every key not listed above, as raw JSON.
        public var otherFields: [String: JSONValue]

        /// Creates an offer; every field defaults to absent.
        public init(
            internalID: String? = nil, offerID: String? = nil, referenceName: String? = nil,
            paymentMode: PaymentMode? = nil, subscriptionPeriod: String? = nil, numberOfPeriods: Int? = nil,
            displayPrice: String? = nil, otherFields: [String: JSONValue] = [:]
        ) {
            self.internalID = internalID
            self.offerID = offerID
            self.referenceName = referenceName
            self.paymentMode = paymentMode
            self.subscriptionPeriod = subscriptionPeriod
            self.numberOfPeriods = numberOfPeriods
            self.displayPrice = displayPrice
            self.otherFields = otherFields
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case internalID
            case offerID
            case referenceName
            case paymentMode
            case subscriptionPeriod
            case numberOfPeriods
            case displayPrice
        }

        private static let typedKeys = Set(CodingKeys.allCases.map(\.rawValue))

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            internalID = try container.decodeIfPresent(String.self, forKey: .internalID)
            offerID = try container.decodeIfPresent(String.self, forKey: .offerID)
            referenceName = try container.decodeIfPresent(String.self, forKey: .referenceName)
            paymentMode = try container.decodeIfPresent(PaymentMode.self, forKey: .paymentMode)
            subscriptionPeriod = try container.decodeIfPresent(String.self, forKey: .subscriptionPeriod)
            numberOfPeriods = try container.decodeIfPresent(Int.self, forKey: .numberOfPeriods)
            displayPrice = try container.decodeIfPresent(String.self, forKey: .displayPrice)
            otherFields = try decoder.container(keyedBy: DynamicCodingKey.self)
                .decodeExtras(excluding: Self.typedKeys)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(internalID, forKey: .internalID)
            try container.encodeIfPresent(offerID, forKey: .offerID)
            try container.encodeIfPresent(referenceName, forKey: .referenceName)
            try container.encodeIfPresent(paymentMode, forKey: .paymentMode)
            try container.encodeIfPresent(subscriptionPeriod, forKey: .subscriptionPeriod)
            try container.encodeIfPresent(numberOfPeriods, forKey: .numberOfPeriods)
            try container.encodeIfPresent(displayPrice, forKey: .displayPrice)
            var extras = encoder.container(keyedBy: DynamicCodingKey.self)
            try extras.encodeExtras(otherFields, excluding: Self.typedKeys)
        }

        /// ``displayPrice`` as an exact decimal.
        public var displayPriceValue: Decimal? { StoreKitConfiguration.decimalPrice(displayPrice) }

        /// ``subscriptionPeriod`` parsed.
        public var subscriptionPeriodValue: SubscriptionPeriod? {
            subscriptionPeriod.flatMap(SubscriptionPeriod.init(iso8601:))
        }
    }
}
