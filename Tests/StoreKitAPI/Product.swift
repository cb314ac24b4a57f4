// The slice of StoreKit 2's `Product` that Kakin's StoreKit backend uses, declared as Apple documents
// it so that the backend compiles, and runs against a scripted App Store, on Linux.
// Apple's documentation: https://developer.apple.com/documentation/storekit/product
// This module is linked only on Linux and only by the backend's target and its tests; on Apple
// platforms the backend links Apple's StoreKit.
public import Foundation

/// Information about a product configured in App Store Connect.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public struct Product: Identifiable, Equatable, Hashable, Sendable {
    /// The product identifier's type.
    public typealias ID = String

    /// The product identifier.
    public let id: Product.ID
    /// The type of the product.
    public let type: Product.ProductType
    /// A localized display name of the product.
    public let displayName: String
    /// A localized description of the product.
    public let description: String
    /// The decimal representation of the cost of the product, in local currency.
    public let price: Decimal
    /// A localized string representation of `price`.
    public let displayPrice: String
    /// Whether the product is available for Family Sharing.
    public let isFamilyShareable: Bool
    /// Properties and functionality specific to auto-renewable subscriptions.
    public let subscription: Product.SubscriptionInfo?
    /// The format style to use when formatting numbers derived from the price for the product.
    public var priceFormatStyle: Decimal.FormatStyle.Currency { _priceFormatStyle }

    let _priceFormatStyle: Decimal.FormatStyle.Currency

    /// Requests product data from the App Store.
    /// https://developer.apple.com/documentation/storekit/product/products(for:)
    public static func products<Identifiers: Collection>(
        for identifiers: Identifiers
    ) async throws -> [Product] where Identifiers.Element == Product.ID {
        try StoreKitTestScript.products(for: Array(identifiers))
    }

    /// Initiates a purchase for the product with the App Store and displays the confirmation sheet.
    /// Throws `Product.PurchaseError` or `StoreKitError`. Unavailable on visionOS, where a purchase
    /// is confirmed in a scene (`purchase(confirmIn:options:)`).
    /// https://developer.apple.com/documentation/storekit/product/purchase(options:)
    @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
    @available(visionOS, unavailable)
    @MainActor
    public func purchase(options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        try StoreKitTestScript.purchase(self, options: options)
    }

    /// Initiates a purchase for the product with the App Store and displays the confirmation sheet
    /// in the scene you provide. Throws `Product.PurchaseError` or `StoreKitError`.
    /// https://developer.apple.com/documentation/storekit/product/purchase(confirmin:options:)
    @available(iOS 17.0, tvOS 17.0, visionOS 1.0, *)
    @available(macOS, unavailable)
    @available(watchOS, unavailable)
    @MainActor
    public func purchase(
        confirmIn scene: some UIScene, options: Set<Product.PurchaseOption> = []
    ) async throws -> Product.PurchaseResult {
        try StoreKitTestScript.purchase(self, options: options, confirmedIn: ObjectIdentifier(scene))
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension Product {
    /// The types of in-app purchases.
    /// https://developer.apple.com/documentation/storekit/product/producttype
    public struct ProductType: RawRepresentable, Equatable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A consumable in-app purchase.
        public static let consumable = ProductType(rawValue: "Consumable")
        /// A non-consumable in-app purchase.
        public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
        /// A non-renewing subscription.
        public static let nonRenewable = ProductType(rawValue: "Non-Renewing Subscription")
        /// An auto-renewable subscription.
        public static let autoRenewable = ProductType(rawValue: "Auto-Renewable Subscription")
    }

    /// The optional settings you can add to a purchase.
    /// https://developer.apple.com/documentation/storekit/product/purchaseoption
    public struct PurchaseOption: Equatable, Hashable, Sendable {
        public enum Kind: Hashable, Sendable {
            case quantity(Int)
            case appAccountToken(UUID)
            case promotionalOffer(offerID: String, keyID: String, nonce: UUID, signature: Data, timestamp: Int)
            case promotionalOfferJWS(offerID: String, compactJWS: String)
            case introductoryOfferEligibility(compactJWS: String)
            case winBackOffer(Product.SubscriptionOffer)
        }
        /// What the option sets; read by the scripted store in tests.
        public let kind: Kind

        /// Sets a quantity for the purchase.
        public static func quantity(_ quantity: Int) -> Product.PurchaseOption { .init(kind: .quantity(quantity)) }
        /// Sets a UUID that associates the purchase with an account in your system.
        public static func appAccountToken(_ token: UUID) -> Product.PurchaseOption {
            .init(kind: .appAccountToken(token))
        }
        /// Applies a promotional offer with the signature your server generated (the older form,
        /// deprecated since iOS 26 in favour of the JWS form).
        /// https://developer.apple.com/documentation/storekit/product/purchaseoption/promotionaloffer(offerid:keyid:nonce:signature:timestamp:)
        @available(
            iOS, introduced: 15.0, deprecated: 26.0,
            message: "Sign promotional offers with JWS and use promotionalOffer(_:compactJWS:) instead"
        )
        @available(
            macOS, introduced: 12.0, deprecated: 26.0,
            message: "Sign promotional offers with JWS and use promotionalOffer(_:compactJWS:) instead"
        )
        @available(
            tvOS, introduced: 15.0, deprecated: 26.0,
            message: "Sign promotional offers with JWS and use promotionalOffer(_:compactJWS:) instead"
        )
        @available(
            watchOS, introduced: 8.0, deprecated: 26.0,
            message: "Sign promotional offers with JWS and use promotionalOffer(_:compactJWS:) instead"
        )
        @available(
            visionOS, introduced: 1.0, deprecated: 26.0,
            message: "Sign promotional offers with JWS and use promotionalOffer(_:compactJWS:) instead"
        )
        public static func promotionalOffer(
            offerID: String, keyID: String, nonce: UUID, signature: Data, timestamp: Int
        ) -> Product.PurchaseOption {
            .init(
                kind: .promotionalOffer(
                    offerID: offerID, keyID: keyID, nonce: nonce, signature: signature, timestamp: timestamp))
        }
        /// Applies a promotional offer with a JWS your server signed. Unlike the other options, it
        /// returns several options, all of which go into the purchase's set.
        /// https://developer.apple.com/documentation/storekit/product/purchaseoption/promotionaloffer(_:compactjws:)
        @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
        @backDeployed(before: iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0)
        public static func promotionalOffer(_ offerID: String, compactJWS: String) -> [Product.PurchaseOption] {
            [.init(kind: .promotionalOfferJWS(offerID: offerID, compactJWS: compactJWS))]
        }
        /// Sets the customer's introductory-offer eligibility with a JWS your server signed.
        /// https://developer.apple.com/documentation/storekit/product/purchaseoption/introductoryoffereligibility(compactjws:)
        @backDeployed(before: iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4)
        public static func introductoryOfferEligibility(compactJWS: String) -> Product.PurchaseOption {
            .init(kind: .introductoryOfferEligibility(compactJWS: compactJWS))
        }
        /// Applies a win-back offer.
        /// https://developer.apple.com/documentation/storekit/product/purchaseoption/winbackoffer(_:)
        @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public static func winBackOffer(_ offer: Product.SubscriptionOffer) -> Product.PurchaseOption {
            .init(kind: .winBackOffer(offer))
        }
    }

    /// The result of a purchase. Apple's documentation shows no `Sendable` conformance, so the
    /// stand-in declares none: the backend maps it on the main actor, where StoreKit returns it.
    /// https://developer.apple.com/documentation/storekit/product/purchaseresult
    public enum PurchaseResult {
        /// The purchase succeeded with a transaction.
        case success(VerificationResult<Transaction>)
        /// The user cancelled the purchase.
        case userCancelled
        /// The purchase is pending, and requires action from the customer.
        case pending
    }

    /// Why the App Store refused a purchase (`purchase(options:)` throws this or `StoreKitError`).
    /// Apple's declaration lists eight cases since iOS 15 and one more since iOS 26.5.
    /// https://developer.apple.com/documentation/storekit/product/purchaseerror
    public enum PurchaseError: Error, Equatable, Hashable {
        /// The quantity to purchase is invalid.
        case invalidQuantity
        /// The product isn't available.
        case productUnavailable
        /// The user isn't allowed to make purchases.
        case purchaseNotAllowed
        /// The user isn't eligible for the offer.
        case ineligibleForOffer
        /// The promotional offer identifier provided in the purchase options is invalid.
        case invalidOfferIdentifier
        /// The price of the offer isn't valid.
        case invalidOfferPrice
        /// The offer signature isn't valid.
        case invalidOfferSignature
        /// The offer parameters are missing.
        case missingOfferParameters
        /// The customer needs to add a payment method to their Apple Account before buying.
        /// https://developer.apple.com/documentation/storekit/product/purchaseerror/paymentmethodbindingconfigurationrequired
        @available(iOS 26.5, macOS 26.5, tvOS 26.5, watchOS 26.5, visionOS 26.5, *)
        case paymentMethodBindingConfigurationRequired
    }

    /// Information about an auto-renewable subscription.
    /// https://developer.apple.com/documentation/storekit/product/subscriptioninfo
    public struct SubscriptionInfo: Equatable, Hashable, Sendable {
        /// The group identifier of the subscription.
        public let subscriptionGroupID: String
        /// The duration that this subscription lasts before auto-renewing.
        public let subscriptionPeriod: Product.SubscriptionPeriod
        /// The level of the subscription within its group (1 is the highest).
        /// https://developer.apple.com/documentation/storekit/product/subscriptioninfo/grouplevel
        @available(iOS 16.4, macOS 13.3, tvOS 16.4, watchOS 9.4, visionOS 1.0, *)
        public var groupLevel: Int { _groupLevel }
        /// The introductory offer of the subscription, if any.
        public let introductoryOffer: Product.SubscriptionOffer?
        /// The promotional offers of the subscription.
        public let promotionalOffers: [Product.SubscriptionOffer]
        /// The win-back offers of the subscription.
        /// https://developer.apple.com/documentation/storekit/product/subscriptioninfo/winbackoffers
        @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public var winBackOffers: [Product.SubscriptionOffer] { _winBackOffers }

        let _groupLevel: Int
        let _winBackOffers: [Product.SubscriptionOffer]

        /// Whether the customer is eligible for the subscription group's introductory offer.
        /// https://developer.apple.com/documentation/storekit/product/subscriptioninfo/iseligibleforintrooffer
        public var isEligibleForIntroOffer: Bool {
            get async { StoreKitTestScript.isEligibleForIntroOffer(groupID: subscriptionGroupID) }
        }
    }

    /// Information about a subscription offer that you configure in App Store Connect.
    /// https://developer.apple.com/documentation/storekit/product/subscriptionoffer
    public struct SubscriptionOffer: Equatable, Hashable, Sendable {
        /// The offer identifier; `nil` for an introductory offer.
        public let id: String?
        /// The type of the offer.
        public let type: Product.SubscriptionOffer.OfferType
        /// The discounted price the offer provides, in local currency.
        public let price: Decimal
        /// A localized string representation of `price`.
        public let displayPrice: String
        /// The duration of one period of the offer.
        public let period: Product.SubscriptionPeriod
        /// The number of periods the offer lasts.
        public let periodCount: Int
        /// The payment mode of the offer.
        public let paymentMode: Product.SubscriptionOffer.PaymentMode

        /// The types of subscription offers.
        /// https://developer.apple.com/documentation/storekit/product/subscriptionoffer/offertype
        public struct OfferType: RawRepresentable, Equatable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            /// An introductory offer.
            public static let introductory = OfferType(rawValue: "introductory")
            /// A promotional offer.
            public static let promotional = OfferType(rawValue: "promotional")
            /// A win-back offer.
            @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
            public static let winBack = OfferType(rawValue: "winBack")
        }

        /// The payment modes of subscription offers.
        /// https://developer.apple.com/documentation/storekit/product/subscriptionoffer/paymentmode
        public struct PaymentMode: RawRepresentable, Equatable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            /// A free trial.
            public static let freeTrial = PaymentMode(rawValue: "freeTrial")
            /// A discounted price each period.
            public static let payAsYouGo = PaymentMode(rawValue: "payAsYouGo")
            /// One discounted price, paid up front, for the offer's periods.
            public static let payUpFront = PaymentMode(rawValue: "payUpFront")
        }
    }

    /// Values that represent the duration of time between subscription renewals.
    /// https://developer.apple.com/documentation/storekit/product/subscriptionperiod
    public struct SubscriptionPeriod: Equatable, Hashable, Sendable {
        /// The number of units that the period represents.
        public let value: Int
        /// The unit of time that this period represents.
        public let unit: Product.SubscriptionPeriod.Unit

        /// Units of time that describe subscription periods.
        /// https://developer.apple.com/documentation/storekit/product/subscriptionperiod/unit
        public enum Unit: Equatable, Hashable, Sendable {
            case day, week, month, year
        }
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension Product.PurchaseError: Sendable {}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension Product.PurchaseError: LocalizedError {
    /// A description of the error (the case's name, in this stand-in).
    public var errorDescription: String? { "\(self)" }
}
