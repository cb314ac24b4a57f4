import Foundation

// The billing objects Kakin reads (plans, subscriptions, invoices), read as the payment objects
// of StripeObjects.swift are: only the fields Kakin needs, times as `Date`s, expandable fields as
// ids.

/// A plan: a recurring price of a product. (Stripe's newer prices are plans too: a price's id
/// works wherever a plan's does.)
struct StripePlan: Decodable, Sendable, Hashable {
    var id: String
    /// The price per period, in minor units; `nil` for a tiered plan.
    var amount: Int?
    var currency: String
    /// `day`, `week`, `month` or `year`.
    var interval: String
    /// How many intervals make one period.
    var intervalCount: Int
    var product: String?
    var active: Bool
    var metadata: [String: String]

    enum CodingKeys: String, CodingKey {
        case id, amount, currency, interval, product, active, metadata
        case intervalCount = "interval_count"
    }

    /// Reads a plan, its product as an id even when expanded.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        amount = try container.decodeIfPresent(Int.self, forKey: .amount)
        currency = try container.decode(String.self, forKey: .currency)
        interval = try container.decode(String.self, forKey: .interval)
        intervalCount = try container.decodeIfPresent(Int.self, forKey: .intervalCount) ?? 1
        product = try container.decodeExpandableID(forKey: .product)
        active = try container.decodeIfPresent(Bool.self, forKey: .active) ?? true
        metadata = try container.decodeMetadata(forKey: .metadata)
    }
}

/// A subscription of a customer to one or more plans.
struct StripeSubscription: Decodable, Sendable, Hashable {
    /// Where a subscription stands; values Stripe adds later are kept as they are.
    struct Status: RawRepresentable, Decodable, Sendable, Hashable {
        var rawValue: String
        init(rawValue: String) { self.rawValue = rawValue }

        static let incomplete = Status(rawValue: "incomplete")
        static let incompleteExpired = Status(rawValue: "incomplete_expired")
        static let trialing = Status(rawValue: "trialing")
        static let active = Status(rawValue: "active")
        static let pastDue = Status(rawValue: "past_due")
        static let canceled = Status(rawValue: "canceled")
        static let unpaid = Status(rawValue: "unpaid")
        static let paused = Status(rawValue: "paused")
    }

    /// One plan of the subscription.
    struct Item: Decodable, Sendable, Hashable {
        var id: String
        /// The plan's id.
        var plan: String?
        /// The price's id (a plan's id where the account sells plans).
        var price: String?
        var quantity: Int?

        enum CodingKeys: String, CodingKey {
            case id, plan, price, quantity
        }

        /// Reads an item, its plan and price (always sent whole) as their ids.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            plan = try container.decodeExpandableID(forKey: .plan)
            price = try container.decodeExpandableID(forKey: .price)
            quantity = try container.decodeIfPresent(Int.self, forKey: .quantity)
        }

        /// The price the item sells: its price, or its plan.
        var priceID: String? { price ?? plan }
    }

    var id: String
    var customer: String
    var status: Status
    /// Whether the subscription ends at the end of its current period instead of renewing.
    var cancelAtPeriodEnd: Bool
    var trialStart: Date?
    var trialEnd: Date?
    var currentPeriodStart: Date?
    var currentPeriodEnd: Date?
    /// When the subscription was canceled (or asked to end at its period's end).
    var canceledAt: Date?
    /// When the subscription ended, once it has.
    var endedAt: Date?
    var latestInvoice: String?
    var items: [Item]
    var metadata: [String: String]
    var created: Date

    enum CodingKeys: String, CodingKey {
        case id, customer, status, items, metadata, created
        case cancelAtPeriodEnd = "cancel_at_period_end"
        case trialStart = "trial_start"
        case trialEnd = "trial_end"
        case currentPeriodStart = "current_period_start"
        case currentPeriodEnd = "current_period_end"
        case canceledAt = "canceled_at"
        case endedAt = "ended_at"
        case latestInvoice = "latest_invoice"
    }

    /// Reads a subscription, its customer and latest invoice as ids even when expanded.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        guard let customer = try container.decodeExpandableID(forKey: .customer) else {
            throw DecodingError.valueNotFound(
                String.self,
                .init(codingPath: container.codingPath + [CodingKeys.customer], debugDescription: "no customer"))
        }
        self.customer = customer
        status = try container.decode(Status.self, forKey: .status)
        cancelAtPeriodEnd = try container.decodeIfPresent(Bool.self, forKey: .cancelAtPeriodEnd) ?? false
        trialStart = try container.decodeIfPresent(Date.self, forKey: .trialStart)
        trialEnd = try container.decodeIfPresent(Date.self, forKey: .trialEnd)
        currentPeriodStart = try container.decodeIfPresent(Date.self, forKey: .currentPeriodStart)
        currentPeriodEnd = try container.decodeIfPresent(Date.self, forKey: .currentPeriodEnd)
        canceledAt = try container.decodeIfPresent(Date.self, forKey: .canceledAt)
        endedAt = try container.decodeIfPresent(Date.self, forKey: .endedAt)
        latestInvoice = try container.decodeExpandableID(forKey: .latestInvoice)
        items = try container.decodeIfPresent(StripeList<Item>.self, forKey: .items)?.data ?? []
        metadata = try container.decodeMetadata(forKey: .metadata)
        created = try container.decode(Date.self, forKey: .created)
    }
}

/// An invoice: what a customer owes for a period of a subscription (or for one-off items), and
/// how it was paid.
struct StripeInvoice: Decodable, Sendable, Hashable {
    /// Where an invoice stands; values Stripe adds later are kept as they are.
    struct Status: RawRepresentable, Decodable, Sendable, Hashable {
        var rawValue: String
        init(rawValue: String) { self.rawValue = rawValue }

        static let draft = Status(rawValue: "draft")
        static let open = Status(rawValue: "open")
        static let paid = Status(rawValue: "paid")
        static let uncollectible = Status(rawValue: "uncollectible")
        static let void = Status(rawValue: "void")
    }

    /// One line of an invoice.
    struct Line: Decodable, Sendable, Hashable {
        var id: String
        var amount: Int
        /// The plan the line bills, for a subscription's line.
        var plan: String?
        var periodStart: Date?
        var periodEnd: Date?

        enum CodingKeys: String, CodingKey {
            case id, amount, plan, period
        }

        enum PeriodKeys: String, CodingKey {
            case start, end
        }

        /// Reads a line, its plan (always sent whole) as its id.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            amount = try container.decode(Int.self, forKey: .amount)
            plan = try container.decodeExpandableID(forKey: .plan)
            if container.contains(.period), try !container.decodeNil(forKey: .period) {
                let period = try container.nestedContainer(keyedBy: PeriodKeys.self, forKey: .period)
                periodStart = try period.decodeIfPresent(Date.self, forKey: .start)
                periodEnd = try period.decodeIfPresent(Date.self, forKey: .end)
            }
        }
    }

    var id: String
    var customer: String?
    var subscription: String?
    var paymentIntent: String?
    var charge: String?
    var status: Status?
    var amountDue: Int
    var amountPaid: Int
    var currency: String
    /// Why the invoice was made (`subscription_create`, `subscription_cycle`…).
    var billingReason: String?
    var periodStart: Date?
    var periodEnd: Date?
    /// The first page of the invoice's lines.
    var lines: [Line]
    var metadata: [String: String]
    var created: Date

    enum CodingKeys: String, CodingKey {
        case id, customer, subscription, charge, status, currency, lines, metadata, created
        case paymentIntent = "payment_intent"
        case amountDue = "amount_due"
        case amountPaid = "amount_paid"
        case billingReason = "billing_reason"
        case periodStart = "period_start"
        case periodEnd = "period_end"
    }

    /// Reads an invoice, its customer, subscription, payment intent and charge as ids even when
    /// expanded.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        customer = try container.decodeExpandableID(forKey: .customer)
        subscription = try container.decodeExpandableID(forKey: .subscription)
        paymentIntent = try container.decodeExpandableID(forKey: .paymentIntent)
        charge = try container.decodeExpandableID(forKey: .charge)
        status = try container.decodeIfPresent(Status.self, forKey: .status)
        amountDue = try container.decode(Int.self, forKey: .amountDue)
        amountPaid = try container.decode(Int.self, forKey: .amountPaid)
        currency = try container.decode(String.self, forKey: .currency)
        billingReason = try container.decodeIfPresent(String.self, forKey: .billingReason)
        periodStart = try container.decodeIfPresent(Date.self, forKey: .periodStart)
        periodEnd = try container.decodeIfPresent(Date.self, forKey: .periodEnd)
        lines = try container.decodeIfPresent(StripeList<Line>.self, forKey: .lines)?.data ?? []
        metadata = try container.decodeMetadata(forKey: .metadata)
        created = try container.decode(Date.self, forKey: .created)
    }
}
