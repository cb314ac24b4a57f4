import Foundation

/// How the server answers the App Store's `Get Retention Message` requests for one app
/// (`apps[].retention`): rules tried in order, the first that matches the subscriber chooses what
/// the App Store shows on the page where they may cancel. When no rule matches, the server answers
/// with no choice and the App Store shows the default message configured for the product and
/// locale.
public struct RetentionPolicy: Hashable, Sendable {
    /// The rules, in the order they are tried.
    public var rules: [RetentionRule]

    /// A policy with these rules (none: every request gets the App Store's default message).
    public init(rules: [RetentionRule] = []) {
        self.rules = rules
    }

    /// The first rule that matches `subscriber`, or `nil`.
    public func rule(for subscriber: RetentionSubscriber) -> RetentionRule? {
        rules.first { $0.matches(subscriber) }
    }
}

/// Where a subscriber stands when they open the page where they may cancel.
public enum RetentionSubscriberState: String, Hashable, Sendable, CaseIterable, Codable {
    /// In a free trial.
    case trial
    /// Apple could not renew: in the billing retry period or its grace period.
    case billingIssue
    /// Paying (an introductory or promotional price included).
    case paid
}

/// What the ledger knows of the subscriber a request is about, as the rules read it.
public struct RetentionSubscriber: Hashable, Sendable {
    /// The product the subscriber would cancel (the request's).
    public var productID: String
    /// The subscriber's locale (`en-US`), as the App Store sends it.
    public var locale: String
    /// Trial, billing issue or paying.
    public var state: RetentionSubscriberState
    /// Whole days since the subscription's first purchase.
    public var tenureDays: Int
    /// How many of the customer's purchases in the app were refunded (or revoked).
    public var refunds: Int
    /// What the customer has paid in the app, by ISO 4217 currency, in milliunits (1990 is 1.99),
    /// refunded purchases left out.
    public var lifetimeValue: [String: Int64]

    /// A subscriber as the rules read them.
    public init(
        productID: String, locale: String, state: RetentionSubscriberState, tenureDays: Int, refunds: Int = 0,
        lifetimeValue: [String: Int64] = [:]
    ) {
        self.productID = productID
        self.locale = locale
        self.state = state
        self.tenureDays = tenureDays
        self.refunds = refunds
        self.lifetimeValue = lifetimeValue
    }
}

/// An amount in one currency, in milliunits (1990 is 1.99).
public struct RetentionAmount: Hashable, Sendable {
    /// The ISO 4217 currency code.
    public var currency: String
    /// The amount in milliunits.
    public var milliunits: Int64

    /// An amount of `currency`.
    public init(currency: String, milliunits: Int64) {
        self.currency = currency
        self.milliunits = milliunits
    }
}

/// One rule of a ``RetentionPolicy``: the conditions a subscriber must meet (each one left out
/// matches everyone), and what is shown to those who meet them all.
public struct RetentionRule: Hashable, Sendable {
    /// The rule's name, recorded with each answer it gives.
    public var name: String
    /// Products the subscriber cancels; empty: any.
    public var products: Set<String>
    /// Locales, each matching itself and, without a region, every region of its language (`en`
    /// matches `en-US` and `en-GB`), ignoring case; empty: any.
    public var locales: [String]
    /// States the subscriber is in; empty: any.
    public var states: Set<RetentionSubscriberState>
    /// Fewest whole days since the subscription's first purchase.
    public var minTenureDays: Int?
    /// Most whole days since the subscription's first purchase.
    public var maxTenureDays: Int?
    /// `true`: only customers with a refund; `false`: only customers without one; `nil`: either.
    public var refunded: Bool?
    /// Least the customer has paid in the app, in one currency, in milliunits.
    public var minLifetimeValue: RetentionAmount?
    /// What the rule shows.
    public var answer: RetentionAnswer

    /// A rule with no conditions (it matches everyone) showing `answer`.
    public init(
        name: String, products: Set<String> = [], locales: [String] = [], states: Set<RetentionSubscriberState> = [],
        minTenureDays: Int? = nil, maxTenureDays: Int? = nil, refunded: Bool? = nil,
        minLifetimeValue: RetentionAmount? = nil, answer: RetentionAnswer
    ) {
        self.name = name
        self.products = products
        self.locales = locales
        self.states = states
        self.minTenureDays = minTenureDays
        self.maxTenureDays = maxTenureDays
        self.refunded = refunded
        self.minLifetimeValue = minLifetimeValue
        self.answer = answer
    }

    /// Whether `subscriber` meets every condition of the rule.
    public func matches(_ subscriber: RetentionSubscriber) -> Bool {
        guard products.isEmpty || products.contains(subscriber.productID),
            locales.isEmpty || locales.contains(where: { Self.locale($0, matches: subscriber.locale) }),
            states.isEmpty || states.contains(subscriber.state),
            subscriber.tenureDays >= (minTenureDays ?? Int.min), subscriber.tenureDays <= (maxTenureDays ?? Int.max)
        else { return false }
        if let refunded, refunded != (subscriber.refunds > 0) { return false }
        if let floor = minLifetimeValue, (subscriber.lifetimeValue[floor.currency] ?? 0) < floor.milliunits {
            return false
        }
        return true
    }

    /// Whether the rule's `pattern` names `locale`: the same locale, or its language alone.
    static func locale(_ pattern: String, matches locale: String) -> Bool {
        let pattern = pattern.lowercased().replacingOccurrences(of: "_", with: "-")
        let locale = locale.lowercased().replacingOccurrences(of: "_", with: "-")
        return locale == pattern || locale.hasPrefix(pattern + "-")
    }
}

/// What a rule shows on the page where the subscriber may cancel.
public enum RetentionAnswer: Hashable, Sendable {
    /// A message uploaded to Apple (text, with or without an image), by its identifier.
    case message(messageID: String)
    /// A message suggesting another subscription of the same group to switch to.
    case alternateProduct(productID: String, messageID: String)
    /// A message with a promotional offer of the product the subscriber cancels, signed by the
    /// server with the app's In-App Purchase key.
    case promotionalOffer(offerID: String, messageID: String)

    /// The identifier of the message shown.
    public var messageID: String {
        switch self {
        case .message(let id), .alternateProduct(_, let id), .promotionalOffer(_, let id): id
        }
    }
}
