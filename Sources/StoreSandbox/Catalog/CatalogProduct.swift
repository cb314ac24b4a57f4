public import AppStoreModels
public import Foundation

/// A product as the catalog keeps it: checked, merged from its `.storekit` file and the catalog
/// options, and not yet tied to a storefront.
///
/// ``SandboxCatalog/localizedProducts(for:storefront:)`` turns it into a ``LocalizedProduct``:
/// a price in the storefront's currency and texts in its language.
public struct CatalogProduct: Hashable, Sendable {
    /// The product ID, such as `com.example.kakin.removeAd`.
    public var id: String
    /// The kind of product, as transactions name it.
    public var type: ProductType
    /// The name developers see, not shown to customers.
    public var referenceName: String?
    /// The price written in the `.storekit` file, in ``currencyCode``.
    public var price: Decimal
    /// The currency of ``price``: that of the file's `_storefront` (US dollars when absent).
    public var currencyCode: String
    /// The names and descriptions per locale, as in the file.
    public var localizations: [StoreKitConfiguration.Localization]
    /// Whether Family Sharing is on.
    public var isFamilyShareable: Bool
    /// The group, level, period and offers of an auto-renewable subscription; `nil` otherwise.
    public var subscription: Subscription?
    /// The Apple-hosted content of a non-consumable, from ``CatalogOptions/hostedContent``.
    public var hostedContent: CatalogOptions.HostedContent?
    /// The `identifier` of the `.storekit` file the product comes from.
    public var configurationIdentifier: String?
    /// The offer-code offers: a subscription's `codeOffers` in its file, and those the catalog
    /// options add (``CatalogOptions/codeOffers``) for any product.
    public var codeOffers: [StoreKitConfiguration.SubscriptionOffer] = []

    /// Creates a product.
    public init(
        id: String, type: ProductType, referenceName: String? = nil, price: Decimal, currencyCode: String = "USD",
        localizations: [StoreKitConfiguration.Localization] = [], isFamilyShareable: Bool = false,
        subscription: Subscription? = nil, hostedContent: CatalogOptions.HostedContent? = nil,
        configurationIdentifier: String? = nil
    ) {
        self.id = id
        self.type = type
        self.referenceName = referenceName
        self.price = price
        self.currencyCode = currencyCode
        self.localizations = localizations
        self.isFamilyShareable = isFamilyShareable
        self.subscription = subscription
        self.hostedContent = hostedContent
        self.configurationIdentifier = configurationIdentifier
    }

    /// What an auto-renewable subscription adds to a product.
    public struct Subscription: Hashable, Sendable {
        /// The subscription group's ID.
        public var groupID: String
        /// The group's reference name.
        public var groupName: String?
        /// The group's customer-facing name per locale.
        public var groupLocalizations: [StoreKitConfiguration.Localization]
        /// The level within the group; 1 is the highest.
        public var groupLevel: Int
        /// The length of one period.
        public var period: SubscriptionPeriod
        /// The offer for customers new to the group.
        public var introductoryOffer: StoreKitConfiguration.IntroductoryOffer?
        /// The promotional offers (`adHocOffers` in the file).
        public var promotionalOffers: [StoreKitConfiguration.AdHocOffer]
        /// The win-back offers (`winbackOffers` in the file), for customers whose subscription lapsed.
        public var winBackOffers: [StoreKitConfiguration.SubscriptionOffer] = []

        /// Creates subscription details.
        public init(
            groupID: String, groupName: String? = nil, groupLocalizations: [StoreKitConfiguration.Localization] = [],
            groupLevel: Int, period: SubscriptionPeriod,
            introductoryOffer: StoreKitConfiguration.IntroductoryOffer? = nil,
            promotionalOffers: [StoreKitConfiguration.AdHocOffer] = []
        ) {
            self.groupID = groupID
            self.groupName = groupName
            self.groupLocalizations = groupLocalizations
            self.groupLevel = groupLevel
            self.period = period
            self.introductoryOffer = introductoryOffer
            self.promotionalOffers = promotionalOffers
        }
    }
}
