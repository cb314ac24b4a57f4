public import Foundation
public import Kakin

/// One product on the paywall: the store's localized product, what the customer already owns,
/// and the offers the SDK exposes for it.
public struct PaywallItem: Identifiable, Hashable, Sendable {
    /// How the product is sold, which decides its section and whether it can be bought again.
    public enum Kind: Hashable, Sendable {
        /// An auto-renewable subscription.
        case subscription
        /// A non-renewing subscription (a season pass): bought again when it ends.
        case nonRenewingSubscription
        /// Bought once and kept (an unlock, hosted content).
        case nonConsumable
        /// Used up and bought again (points, credits).
        case consumable
    }

    /// The product as the store localized it: name, description, `displayPrice`.
    public var product: StoreProduct
    /// How it is sold.
    public var kind: Kind
    /// Whether an active entitlement of the customer comes from this product.
    public var isOwned: Bool
    /// Whether the purchase server hosts content for it (downloaded before the purchase finishes).
    public var hasContent: Bool
    /// The introductory offer (a free week, say) when the customer may still take it; `nil` when
    /// there is none or the store says the customer had it already.
    public var introductoryOffer: SubscriptionOffer?
    /// Offers for customers the app chooses; the purchase server signs one at purchase time.
    public var promotionalOffers: [SubscriptionOffer]
    /// Offers for customers whose subscription lapsed; the store checks eligibility.
    public var winBackOffers: [SubscriptionOffer]

    /// The product ID.
    public var id: String { product.id }

    /// Whether the buy button is enabled: consumables always, anything else until it is owned.
    public var canBuy: Bool { kind == .consumable || !isOwned }

    /// The price as the paywall shows it: `¥100`, or `$4.99 / month` for a subscription.
    public var priceText: String {
        guard kind == .subscription, let period = product.subscriptionPeriodValue else { return product.displayPrice }
        return "\(product.displayPrice) / \(OfferText.period(value: period.value, unit: period.unit.rawValue, single: true))"
    }

    /// Makes an item; ``Paywall/init(products:customer:contentProductIDs:at:)`` makes them from
    /// the store's products, previews by hand.
    public init(
        product: StoreProduct, kind: Kind, isOwned: Bool = false, hasContent: Bool = false,
        introductoryOffer: SubscriptionOffer? = nil, promotionalOffers: [SubscriptionOffer] = [],
        winBackOffers: [SubscriptionOffer] = []
    ) {
        self.product = product
        self.kind = kind
        self.isOwned = isOwned
        self.hasContent = hasContent
        self.introductoryOffer = introductoryOffer
        self.promotionalOffers = promotionalOffers
        self.winBackOffers = winBackOffers
    }
}

/// The paywall's sections, made from the store's products and the customer the server answered
/// with: subscriptions (by level in their group), one-time unlocks, and consumables.
public struct Paywall: Hashable, Sendable {
    /// Auto-renewable subscriptions, the group's highest level first.
    public var subscriptions: [PaywallItem]
    /// Non-consumables and non-renewing subscriptions.
    public var unlocks: [PaywallItem]
    /// Consumables.
    public var consumables: [PaywallItem]

    /// Whether there is nothing to sell (the products are not loaded, or none was found).
    public var isEmpty: Bool { subscriptions.isEmpty && unlocks.isEmpty && consumables.isEmpty }

    /// Every item, in the order the sections show them.
    public var items: [PaywallItem] { subscriptions + unlocks + consumables }

    /// The paywall for `products` (in the order loaded) and `customer` at `date`. A product is
    /// owned when one of the customer's entitlements that ``CustomerInfo/isEntitled(to:at:)``
    /// grants comes from it.
    public init(products: [StoreProduct], customer: CustomerInfo?, contentProductIDs: Set<String>, at date: Date) {
        let owned = Set(
            (customer?.entitlements ?? []).filter { customer?.isEntitled(to: $0.identifier, at: date) == true }
                .map(\.productID))
        var subscriptions: [PaywallItem] = []
        var unlocks: [PaywallItem] = []
        var consumables: [PaywallItem] = []
        for product in products {
            let kind: PaywallItem.Kind =
                switch product.type {
                case .autoRenewableSubscription: .subscription
                case .consumable: .consumable
                case .nonRenewingSubscription: .nonRenewingSubscription
                default: .nonConsumable
                }
            let item = PaywallItem(
                product: product, kind: kind, isOwned: owned.contains(product.id),
                hasContent: contentProductIDs.contains(product.id),
                introductoryOffer: product.isEligibleForIntroductoryOffer == false ? nil : product.introductoryOffer,
                promotionalOffers: product.promotionalOffers, winBackOffers: product.winBackOffers)
            switch kind {
            case .subscription: subscriptions.append(item)
            case .consumable: consumables.append(item)
            case .nonConsumable, .nonRenewingSubscription: unlocks.append(item)
            }
        }
        // Level 1 is the group's highest; products without a level keep their order.
        self.subscriptions = subscriptions.enumerated().sorted { lhs, rhs in
            let left = lhs.element.product.subscriptionGroupLevel ?? .max
            let right = rhs.element.product.subscriptionGroupLevel ?? .max
            return left == right ? lhs.offset < rhs.offset : left < right
        }.map(\.element)
        self.unlocks = unlocks
        self.consumables = consumables
    }

    /// Makes a paywall from its sections (previews).
    public init(subscriptions: [PaywallItem] = [], unlocks: [PaywallItem] = [], consumables: [PaywallItem] = []) {
        self.subscriptions = subscriptions
        self.unlocks = unlocks
        self.consumables = consumables
    }
}

/// Offers in words, as a paywall shows them under a subscription: "1 week free",
/// "$1.99 a month for 3 months", "$0.99 for 1 month". English; the prices are the store's own
/// localized `displayPrice`.
public enum OfferText {
    /// The offer's terms in words.
    public static func describe(_ offer: SubscriptionOffer) -> String {
        let unit = offer.period.unit.rawValue
        let total = period(value: offer.period.value * offer.periodCount, unit: unit, single: false)
        switch offer.paymentMode {
        case .freeTrial:
            return "\(total) free"
        case .payAsYouGo:
            let each = period(value: offer.period.value, unit: unit, single: true)
            return "\(offer.displayPrice) a \(each) for \(total)"
        case .payUpFront:
            return "\(offer.displayPrice) for \(total)"
        }
    }

    /// `3 months`, `1 week` for a number of periods of ISO 8601's `unit` (`D`, `W`, `M`, `Y`);
    /// with `single`, one period reads as the unit alone (`month`).
    static func period(value: Int, unit: String, single: Bool) -> String {
        let name =
            switch unit {
            case "D": "day"
            case "W": "week"
            case "M": "month"
            case "Y": "year"
            default: unit
            }
        if value == 1 { return single ? name : "1 \(name)" }
        return "\(value) \(name)s"
    }
}
