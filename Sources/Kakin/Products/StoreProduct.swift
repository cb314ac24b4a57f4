public import AppStoreModels
public import Foundation

/// A product as the store presents it: localized for the customer's storefront.
///
/// One type over StoreKit's `Product` (and `SKProduct`) and the sandbox's products, so an app's
/// code is the same on a device and in a test.
public struct StoreProduct: Codable, Hashable, Sendable, Identifiable {
    /// The product ID, as configured in App Store Connect.
    public var id: String
    /// Consumable, non-consumable, or a kind of subscription.
    public var type: ProductType
    /// The localized name.
    public var displayName: String
    /// The localized description.
    public var description: String
    /// The price in the storefront's currency.
    public var price: Decimal
    /// The price formatted for the storefront's locale, e.g. `¥100`, `$0.99`, `0,99 €`.
    public var displayPrice: String
    /// The ISO 4217 code of the price's currency, e.g. `JPY`.
    public var currencyCode: String
    /// The locale prices are formatted in, e.g. `ja_JP`; pass it to
    /// ``ProductManager/format(_:currencyCode:localeIdentifier:)`` for prices the app computes.
    public var priceLocaleIdentifier: String
    /// Whether Family Sharing extends the purchase to the family.
    public var isFamilyShareable: Bool
    /// ISO 8601 period of an auto-renewable subscription, e.g. `P1M`.
    public var subscriptionPeriod: String?
    /// The subscription group of a subscription; `nil` for other products.
    public var subscriptionGroupID: String?
    /// Whether the product has hosted content to download after purchase.
    public var isDownloadable: Bool
    /// The subscription's level in its group (1 is the highest: customers move up and down
    /// between levels); `nil` for other products, or when the store does not say.
    public var subscriptionGroupLevel: Int?
    /// The subscription's introductory offer (a free trial or a discounted first period), if any.
    public var introductoryOffer: SubscriptionOffer?
    /// Whether the customer may still take the introductory offer (once per subscription group);
    /// `nil` when the product has none or the store did not say.
    public var isEligibleForIntroductoryOffer: Bool?
    /// Promotional offers of the subscription, for customers the app chooses.
    public var promotionalOffers: [SubscriptionOffer]
    /// Win-back offers of the subscription, for customers whose subscription lapsed.
    public var winBackOffers: [SubscriptionOffer]

    /// ``subscriptionPeriod`` parsed: `P1M` is one month.
    public var subscriptionPeriodValue: SubscriptionPeriod? {
        subscriptionPeriod.flatMap(SubscriptionPeriod.init(iso8601:))
    }

    /// Creates a product. Backends build these from the store's answer; tests and previews can
    /// build them by hand.
    public init(
        id: String, type: ProductType, displayName: String, description: String, price: Decimal, displayPrice: String,
        currencyCode: String, priceLocaleIdentifier: String, isFamilyShareable: Bool = false,
        subscriptionPeriod: String? = nil, subscriptionGroupID: String? = nil, isDownloadable: Bool = false,
        subscriptionGroupLevel: Int? = nil, introductoryOffer: SubscriptionOffer? = nil,
        isEligibleForIntroductoryOffer: Bool? = nil, promotionalOffers: [SubscriptionOffer] = [],
        winBackOffers: [SubscriptionOffer] = []
    ) {
        self.subscriptionGroupLevel = subscriptionGroupLevel
        self.introductoryOffer = introductoryOffer
        self.isEligibleForIntroductoryOffer = isEligibleForIntroductoryOffer
        self.promotionalOffers = promotionalOffers
        self.winBackOffers = winBackOffers
        self.id = id
        self.type = type
        self.displayName = displayName
        self.description = description
        self.price = price
        self.displayPrice = displayPrice
        self.currencyCode = currencyCode
        self.priceLocaleIdentifier = priceLocaleIdentifier
        self.isFamilyShareable = isFamilyShareable
        self.subscriptionPeriod = subscriptionPeriod
        self.subscriptionGroupID = subscriptionGroupID
        self.isDownloadable = isDownloadable
    }
}

/// A discount on an auto-renewable subscription: an introductory, promotional or win-back offer.
public struct SubscriptionOffer: Codable, Hashable, Sendable {
    /// Which kind of offer.
    public enum Kind: String, Codable, Hashable, Sendable {
        /// For new subscribers of the group, once.
        case introductory
        /// For customers the app chooses; needs a signature from the developer's server.
        case promotional
        /// For customers whose subscription lapsed.
        case winBack
    }

    /// How the customer pays during the offer.
    public enum PaymentMode: String, Codable, Hashable, Sendable {
        /// Nothing, for the offer's periods.
        case freeTrial
        /// The offer's price each period.
        case payAsYouGo
        /// The offer's price once, for all its periods.
        case payUpFront
    }

    /// The offer's identifier; `nil` for an introductory offer.
    public var id: String?
    /// Which kind of offer.
    public var kind: Kind
    /// The price during the offer, in the storefront's currency.
    public var price: Decimal
    /// That price formatted for the storefront.
    public var displayPrice: String
    /// The length of one period of the offer.
    public var period: SubscriptionPeriod
    /// How many periods the offer lasts.
    public var periodCount: Int
    /// How the customer pays during the offer.
    public var paymentMode: PaymentMode

    /// Creates an offer.
    public init(
        id: String?, kind: Kind, price: Decimal, displayPrice: String, period: SubscriptionPeriod, periodCount: Int,
        paymentMode: PaymentMode
    ) {
        self.id = id
        self.kind = kind
        self.price = price
        self.displayPrice = displayPrice
        self.period = period
        self.periodCount = periodCount
        self.paymentMode = paymentMode
    }

    enum CodingKeys: String, CodingKey {
        case id, kind, price, displayPrice, period, periodCount, paymentMode
    }

    /// Reads an offer whose period is written in ISO 8601 (`P1W`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try container.decode(String.self, forKey: .period)
        guard let period = SubscriptionPeriod(iso8601: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: .period, in: container, debugDescription: "\(text) is not a period such as P1W")
        }
        self.init(
            id: try container.decodeIfPresent(String.self, forKey: .id), kind: try container.decode(Kind.self, forKey: .kind),
            price: try container.decode(Decimal.self, forKey: .price),
            displayPrice: try container.decode(String.self, forKey: .displayPrice), period: period,
            periodCount: try container.decode(Int.self, forKey: .periodCount),
            paymentMode: try container.decode(PaymentMode.self, forKey: .paymentMode))
    }

    /// Writes the offer, its period in ISO 8601 (`P1W`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(id, forKey: .id)
        try container.encode(kind, forKey: .kind)
        try container.encode(price, forKey: .price)
        try container.encode(displayPrice, forKey: .displayPrice)
        try container.encode(period.iso8601, forKey: .period)
        try container.encode(periodCount, forKey: .periodCount)
        try container.encode(paymentMode, forKey: .paymentMode)
    }
}

/// A product ID the store did not recognise, with why (e.g. not cleared for sale, a bundle ID
/// mismatch, no Paid Applications agreement).
public struct InvalidProduct: Codable, Hashable, Sendable {
    /// The product ID that was asked for.
    public var id: String
    /// A short machine-readable reason, e.g. `unknownProduct`.
    public var reason: String
    /// The reason explained for people.
    public var message: String

    /// Creates an entry for an unrecognised product ID.
    public init(id: String, reason: String, message: String) {
        self.id = id
        self.reason = reason
        self.message = message
    }
}

/// A transaction as the store hands it to the app, with the JWS that proves it.
public struct StoreTransaction: Codable, Hashable, Sendable, Identifiable {
    /// The transaction ID: the key by which the outbox and the server deliver it once.
    public var id: String
    /// The transaction ID of the original purchase, shared by its renewals and restores.
    public var originalID: String
    /// The product bought.
    public var productID: String
    /// The type of the product bought.
    public var productType: ProductType
    /// How many units were bought.
    public var quantity: Int
    /// When it was bought (for a renewal, when it renewed).
    public var purchaseDate: Date
    /// When a subscription period ends; `nil` for other products.
    public var expirationDate: Date?
    /// When the App Store refunded or revoked it, if it did.
    public var revocationDate: Date?
    /// The app account token given at purchase, as a UUID string: it ties the transaction to
    /// an app user.
    public var appAccountToken: String?
    /// The signed transaction (StoreKit 2's `jwsRepresentation`), what the server verifies.
    public var jwsRepresentation: String

    /// Creates a transaction from its fields.
    public init(
        id: String, originalID: String, productID: String, productType: ProductType, quantity: Int, purchaseDate: Date,
        expirationDate: Date? = nil, revocationDate: Date? = nil, appAccountToken: String? = nil,
        jwsRepresentation: String
    ) {
        self.id = id
        self.originalID = originalID
        self.productID = productID
        self.productType = productType
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.expirationDate = expirationDate
        self.revocationDate = revocationDate
        self.appAccountToken = appAccountToken
        self.jwsRepresentation = jwsRepresentation
    }

    /// Builds a transaction from a signed JWS and its decoded payload.
    public init?(jws: String, payload: JWSTransactionDecodedPayload) {
        guard let id = payload.transactionID, let productID = payload.productID, let purchaseDate = payload.purchaseDate
        else { return nil }
        self.init(
            id: id, originalID: payload.originalTransactionID ?? id, productID: productID,
            productType: payload.type ?? .nonConsumable, quantity: payload.quantity ?? 1, purchaseDate: purchaseDate,
            expirationDate: payload.expiresDate, revocationDate: payload.revocationDate,
            appAccountToken: payload.appAccountToken, jwsRepresentation: jws)
    }
}
