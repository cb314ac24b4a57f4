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

            public init(entitlement: String? = nil, currency: String? = nil, amount: Int64? = nil, content: Bool? = nil) {
                self.entitlement = entitlement
                self.currency = currency
                self.amount = amount
                self.content = content
            }
        }

        public var productId: String
        /// `Consumable`, `NonConsumable`, `RecurringSubscription`, … as in the `.storekit` file.
        public var type: String
        public var referenceName: String?
        public var displayName: String?
        public var description: String?
        /// The price in the catalog's own storefront; the customer's price comes from the store.
        public var displayPrice: String?
        public var subscriptionGroupId: String?
        public var subscriptionPeriod: String?
        public var grants: [Grant]

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

    public var bundleId: String
    public var locale: String
    public var products: [Product]

    public init(bundleId: String, locale: String, products: [Product]) {
        self.bundleId = bundleId
        self.locale = locale
        self.products = products
    }
}
