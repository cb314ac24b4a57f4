public import AppStoreModels
public import Foundation

/// A product as the store presents it: localized for the customer's storefront.
///
/// One type over StoreKit's `Product` (and `SKProduct`) and the sandbox's products, so an app's
/// code is the same on a device and in a test.
public struct StoreProduct: Codable, Hashable, Sendable, Identifiable {
    public var id: String
    public var type: ProductType
    public var displayName: String
    public var description: String
    /// The price in the storefront's currency.
    public var price: Decimal
    /// The price formatted for the storefront's locale, e.g. `¥100`, `$0.99`, `0,99 €`.
    public var displayPrice: String
    public var currencyCode: String
    public var priceLocaleIdentifier: String
    public var isFamilyShareable: Bool
    /// ISO 8601 period of an auto-renewable subscription, e.g. `P1M`.
    public var subscriptionPeriod: String?
    public var subscriptionGroupID: String?
    /// Whether the product has hosted content to download after purchase.
    public var isDownloadable: Bool

    public init(
        id: String, type: ProductType, displayName: String, description: String, price: Decimal, displayPrice: String,
        currencyCode: String, priceLocaleIdentifier: String, isFamilyShareable: Bool = false,
        subscriptionPeriod: String? = nil, subscriptionGroupID: String? = nil, isDownloadable: Bool = false
    ) {
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

/// A product ID the store did not recognise, with why (e.g. not cleared for sale, a bundle ID
/// mismatch, no Paid Applications agreement).
public struct InvalidProduct: Codable, Hashable, Sendable {
    public var id: String
    public var reason: String
    public var message: String

    public init(id: String, reason: String, message: String) {
        self.id = id
        self.reason = reason
        self.message = message
    }
}

/// A transaction as the store hands it to the app, with the JWS that proves it.
public struct StoreTransaction: Codable, Hashable, Sendable, Identifiable {
    public var id: String
    public var originalID: String
    public var productID: String
    public var productType: ProductType
    public var quantity: Int
    public var purchaseDate: Date
    public var expirationDate: Date?
    public var revocationDate: Date?
    public var appAccountToken: String?
    /// The signed transaction (StoreKit 2's `jwsRepresentation`), what the server verifies.
    public var jwsRepresentation: String

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
