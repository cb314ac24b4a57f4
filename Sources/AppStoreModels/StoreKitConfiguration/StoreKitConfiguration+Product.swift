public import Foundation

extension StoreKitConfiguration {
    /// A consumable, non-consumable or non-renewing subscription in a `.storekit` file.
    public struct Product: Codable, Hashable, Sendable {
        /// The price as written in the file, such as `"199.99"`. See ``displayPriceValue``.
        public var displayPrice: String?
        /// Whether Family Sharing is on for the product.
        public var familyShareable: Bool?
        /// Xcode's own ID for the entry.
        public var internalID: String?
        /// The name and description per locale.
        public var localizations: [Localization]?
        /// The product ID the app asks for.
        public var productID: String?
        /// The name developers see, not shown to customers.
        public var referenceName: String?
        /// The kind of product.
        public var type: ProductType?

        /// Creates a product; every field defaults to absent.
        public init(
            displayPrice: String? = nil, familyShareable: Bool? = nil, internalID: String? = nil,
            localizations: [Localization]? = nil, productID: String? = nil, referenceName: String? = nil,
            type: ProductType? = nil
        ) {
            self.displayPrice = displayPrice
            self.familyShareable = familyShareable
            self.internalID = internalID
            self.localizations = localizations
            self.productID = productID
            self.referenceName = referenceName
            self.type = type
        }

        enum CodingKeys: String, CodingKey {
            case displayPrice
            case familyShareable
            case internalID
            case localizations
            case productID
            case referenceName
            case type
        }

        /// ``displayPrice`` as an exact decimal, or `nil` when it is absent or not a plain number.
        public var displayPriceValue: Decimal? { StoreKitConfiguration.decimalPrice(displayPrice) }
    }

    /// The customer-facing name and description of a product or group in one locale.
    public struct Localization: Codable, Hashable, Sendable {
        /// The description shown to customers.
        public var description: String?
        /// The name shown to customers.
        public var displayName: String?
        /// The locale, written with an underscore, such as `en_US`.
        public var locale: String?

        /// Creates a localization; every field defaults to absent.
        public init(description: String? = nil, displayName: String? = nil, locale: String? = nil) {
            self.description = description
            self.displayName = displayName
            self.locale = locale
        }

        enum CodingKeys: String, CodingKey {
            case description
            case displayName
            case locale
        }
    }
}
