/// The server's product list (`GET /v1/catalog`): what the app sells and what each purchase
/// grants, so a new product needs no app update.
public struct CatalogAnswer: Codable, Hashable, Sendable {
    /// One product.
    public struct Product: Codable, Hashable, Sendable {
        /// One thing a purchase gives.
        public struct Grant: Codable, Hashable, Sendable {
            /// An entitlement the purchase unlocks (`removeAds`).
            public var entitlement: String?
            /// A consumable currency it credits (`points`) …
            public var currency: String?
            /// … and how much per unit.
            public var amount: Int64?
            /// Whether the product has hosted content.
            public var content: Bool?

            /// Creates a grant; set the fields that apply.
            public init(entitlement: String? = nil, currency: String? = nil, amount: Int64? = nil, content: Bool? = nil) {
                self.entitlement = entitlement
                self.currency = currency
                self.amount = amount
                self.content = content
            }
        }

        /// The product ID.
        public var productId: String
        /// `Consumable`, `NonConsumable`, `RecurringSubscription`, … as in the `.storekit` file.
        public var type: String
        /// The internal name in App Store Connect, never shown to customers.
        public var referenceName: String?
        /// The name shown to customers, in the catalog's locale.
        public var displayName: String?
        /// The description, in the catalog's locale.
        public var description: String?
        /// The price in the catalog's own storefront; the customer's price comes from the store.
        public var displayPrice: String?
        /// The subscription group of a subscription.
        public var subscriptionGroupId: String?
        /// The renewal period of a subscription, ISO 8601 (`P1M`).
        public var subscriptionPeriod: String?
        /// What a purchase of it gives.
        public var grants: [Grant]

        /// Creates a catalog entry.
        public init(
            productId: String, type: String, referenceName: String? = nil, displayName: String? = nil,
            description: String? = nil, displayPrice: String? = nil, subscriptionGroupId: String? = nil,
            subscriptionPeriod: String? = nil, grants: [Grant] = []
        ) {
            self.productId = productId
            self.type = type
            self.referenceName = referenceName
            self.displayName = displayName
            self.description = description
            self.displayPrice = displayPrice
            self.subscriptionGroupId = subscriptionGroupId
            self.subscriptionPeriod = subscriptionPeriod
            self.grants = grants
        }
    }

    /// The app the catalog is for.
    public var bundleId: String
    /// The locale of the names and descriptions, e.g. `ja_JP`.
    public var locale: String
    /// The products on sale.
    public var products: [Product]

    /// Creates a catalog.
    public init(bundleId: String, locale: String, products: [Product]) {
        self.bundleId = bundleId
        self.locale = locale
        self.products = products
    }
}
