public import AppStoreModels
public import Foundation

/// A product as a storefront shows it: what `SKProduct` and StoreKit 2's `Product` give an app.
///
/// The texts are in the storefront's language and the price is in its currency, already formatted
/// (``displayPrice``), so an app never needs to format a price itself. The fields map to StoreKit:
///
/// | here | `SKProduct` | `Product` |
/// | --- | --- | --- |
/// | ``id`` | `productIdentifier` | `id` |
/// | ``displayName`` | `localizedTitle` | `displayName` |
/// | ``description`` | `localizedDescription` | `description` |
/// | ``price`` | `price` | `price` |
/// | ``displayPrice`` | formatted with `priceLocale` | `displayPrice` |
/// | ``priceLocaleIdentifier`` | `priceLocale` | `priceFormatStyle.locale` |
/// | ``isDownloadable`` | `isDownloadable` | — |
/// | ``subscription`` | `subscriptionPeriod`, `introductoryPrice`, `discounts` | `subscription` |
public struct LocalizedProduct: Codable, Hashable, Sendable {
    /// The product ID.
    public var id: String
    /// The kind of product, as transactions name it.
    public var type: ProductType
    /// The name in the storefront's language.
    public var displayName: String
    /// The description in the storefront's language.
    public var description: String
    /// The locale of the texts chosen, such as `ja_JP`, or `nil` when the product has none.
    public var localizationLocale: String?
    /// The price in the storefront's currency.
    public var price: Decimal
    /// ``price`` formatted for the storefront, such as `$0.99`, `¥100` or `0,99 €`.
    public var displayPrice: String
    /// The ISO 4217 code of the currency, such as `JPY`.
    public var currencyCode: String
    /// The locale prices are formatted with, such as `ja_JP`.
    public var priceLocaleIdentifier: String
    /// The storefront's alpha-3 country code, such as `JPN`.
    public var storefrontCountryCode: String
    /// The storefront's numeric ID, such as `143462`.
    public var storefrontIdentifier: String
    /// Whether Family Sharing is on.
    public var isFamilyShareable: Bool
    /// Group, period and offers of an auto-renewable subscription; `nil` for other products,
    /// including non-renewing subscriptions, as in StoreKit.
    public var subscription: SubscriptionInfo?
    /// Whether Apple hosts content for the product, downloaded after purchase.
    public var isDownloadable: Bool
    /// The version of the hosted content; `nil` when ``isDownloadable`` is false.
    public var downloadContentVersion: String?
    /// The sizes in bytes of the hosted content packages; empty when ``isDownloadable`` is false.
    public var downloadContentLengths: [Int64]

    /// Creates a product.
    public init(
        id: String, type: ProductType, displayName: String, description: String, localizationLocale: String?,
        price: Decimal, displayPrice: String, currencyCode: String, priceLocaleIdentifier: String,
        storefrontCountryCode: String, storefrontIdentifier: String, isFamilyShareable: Bool,
        subscription: SubscriptionInfo?, isDownloadable: Bool, downloadContentVersion: String?,
        downloadContentLengths: [Int64]
    ) {
        self.id = id
        self.type = type
        self.displayName = displayName
        self.description = description
        self.localizationLocale = localizationLocale
        self.price = price
        self.displayPrice = displayPrice
        self.currencyCode = currencyCode
        self.priceLocaleIdentifier = priceLocaleIdentifier
        self.storefrontCountryCode = storefrontCountryCode
        self.storefrontIdentifier = storefrontIdentifier
        self.isFamilyShareable = isFamilyShareable
        self.subscription = subscription
        self.isDownloadable = isDownloadable
        self.downloadContentVersion = downloadContentVersion
        self.downloadContentLengths = downloadContentLengths
    }

    enum CodingKeys: String, CodingKey {
        case id
        case type
        case displayName
        case description
        case localizationLocale
        case price
        case displayPrice
        case currencyCode
        case priceLocaleIdentifier
        case storefrontCountryCode
        case storefrontIdentifier
        case isFamilyShareable
        case subscription
        case isDownloadable
        case downloadContentVersion
        case downloadContentLengths
    }
}
