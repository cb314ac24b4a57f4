public import Foundation

/// An Xcode StoreKit configuration file (`.storekit`): the products an app sells, for local testing.
///
/// Xcode writes it as JSON. Kakin reads it to know which products the sandbox App Store offers, at
/// what price, with which subscription offers, and how the test session behaves (``Settings``).
/// Apple does not document the format; keys are modelled as seen in files written by Xcode 12 to 16
/// (format versions 1.1 to 4.0). Unknown settings are kept; unknown keys elsewhere are ignored.
public struct StoreKitConfiguration: Codable, Hashable, Sendable {
    /// The file's own ID, written by Xcode.
    public var identifier: String?
    /// The non-renewing subscriptions.
    public var nonRenewingSubscriptions: [Product]?
    /// The consumables and non-consumables.
    public var products: [Product]?
    /// How the test session behaves.
    public var settings: Settings?
    /// The auto-renewable subscriptions, by group.
    public var subscriptionGroups: [SubscriptionGroup]?
    /// The version of the file format.
    public var version: Version?
    /// The license agreement and privacy policies shown in the subscription UI.
    public var appPolicies: AppPolicies?
    /// The key that signs promotional offers in local testing.
    public var subscriptionOffersKeyPair: SubscriptionOffersKeyPair?

    /// Creates a configuration; every field defaults to absent.
    public init(
        identifier: String? = nil, nonRenewingSubscriptions: [Product]? = nil, products: [Product]? = nil,
        settings: Settings? = nil, subscriptionGroups: [SubscriptionGroup]? = nil, version: Version? = nil,
        appPolicies: AppPolicies? = nil, subscriptionOffersKeyPair: SubscriptionOffersKeyPair? = nil
    ) {
        self.identifier = identifier
        self.nonRenewingSubscriptions = nonRenewingSubscriptions
        self.products = products
        self.settings = settings
        self.subscriptionGroups = subscriptionGroups
        self.version = version
        self.appPolicies = appPolicies
        self.subscriptionOffersKeyPair = subscriptionOffersKeyPair
    }

    enum CodingKeys: String, CodingKey {
        case identifier
        case nonRenewingSubscriptions
        case products
        case settings
        case subscriptionGroups
        case version
        case appPolicies
        case subscriptionOffersKeyPair
    }

    /// Decodes the contents of a `.storekit` file.
    public static func load(from data: Data) throws -> StoreKitConfiguration {
        try JSONDecoder().decode(StoreKitConfiguration.self, from: data)
    }

    /// Encodes the configuration as pretty-printed JSON with sorted keys, close to what Xcode writes.
    public func encodedJSON() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// Every subscription in every group.
    public var allSubscriptions: [Subscription] {
        (subscriptionGroups ?? []).flatMap { $0.subscriptions ?? [] }
    }

    /// The product IDs of every product, non-renewing subscription and auto-renewable subscription.
    public var allProductIDs: [String] {
        ((products ?? []) + (nonRenewingSubscriptions ?? [])).compactMap(\.productID)
            + allSubscriptions.compactMap(\.productID)
    }
}

extension StoreKitConfiguration {
    /// The kind of a product in a `.storekit` file.
    public struct ProductType: WireEnum {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Bought, used up, and bought again.
        public static let consumable = Self(rawValue: "Consumable")
        /// Bought once and kept.
        public static let nonConsumable = Self(rawValue: "NonConsumable")
        /// A subscription for a fixed time, renewed by hand.
        public static let nonRenewingSubscription = Self(rawValue: "NonRenewingSubscription")
        /// An auto-renewable subscription.
        public static let recurringSubscription = Self(rawValue: "RecurringSubscription")

        public static let knownValues: [Self] = [
            .consumable, .nonConsumable, .nonRenewingSubscription, .recurringSubscription,
        ]
    }

    /// How a subscription offer charges the customer.
    public struct PaymentMode: WireEnum {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A free trial.
        public static let free = Self(rawValue: "free")
        /// A reduced price every period of the offer.
        public static let payAsYouGo = Self(rawValue: "payAsYouGo")
        /// A reduced price paid once for the whole offer.
        public static let payUpFront = Self(rawValue: "payUpFront")

        public static let knownValues: [Self] = [.free, .payAsYouGo, .payUpFront]
    }

    /// Reads a price as Xcode writes it (`"199.99"`, always with a dot) into an exact decimal.
    static func decimalPrice(_ text: String?) -> Decimal? {
        guard let text, !text.isEmpty,
            text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            text.filter({ $0 == "." }).count <= 1
        else { return nil }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }
}
