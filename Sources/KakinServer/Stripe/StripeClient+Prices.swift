import Foundation

/// What a customer pays for a web product: an amount in a currency, once or every period.
///
/// Read from a Stripe price (`GET /v1/prices/{id}`) or, for an ID Stripe knows as a plan only,
/// from the plan (`GET /v1/plans/{id}`): a plan is always recurring.
struct StripePrice: Decodable, Sendable, Hashable {
    /// How often a recurring price charges.
    struct Recurring: Decodable, Sendable, Hashable {
        /// `day`, `week`, `month` or `year`.
        var interval: String
        /// How many intervals make one period.
        var intervalCount: Int

        enum CodingKeys: String, CodingKey {
            case interval
            case intervalCount = "interval_count"
        }

        /// A period of `intervalCount` `interval`s.
        init(interval: String, intervalCount: Int) {
            self.interval = interval
            self.intervalCount = intervalCount
        }

        /// Reads a price's `recurring`, one interval when Stripe gives no count.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            interval = try container.decode(String.self, forKey: .interval)
            intervalCount = try container.decodeIfPresent(Int.self, forKey: .intervalCount) ?? 1
        }
    }

    var id: String
    /// The amount in the currency's minor units; `nil` for a tiered or customer-chosen price.
    var unitAmount: Int?
    /// Stripe's lowercase ISO code (`usd`, `jpy`).
    var currency: String
    /// How often it charges; `nil` for a one-time price.
    var recurring: Recurring?
    var product: String?
    var active: Bool

    enum CodingKeys: String, CodingKey {
        case id, currency, recurring, product, active
        case unitAmount = "unit_amount"
    }

    /// A price from its parts.
    init(id: String, unitAmount: Int?, currency: String, recurring: Recurring?, product: String?, active: Bool) {
        self.id = id
        self.unitAmount = unitAmount
        self.currency = currency
        self.recurring = recurring
        self.product = product
        self.active = active
    }

    /// The price a plan stands for: its amount, currency and period.
    init(plan: StripePlan) {
        self.init(
            id: plan.id, unitAmount: plan.amount, currency: plan.currency,
            recurring: Recurring(interval: plan.interval, intervalCount: plan.intervalCount), product: plan.product,
            active: plan.active)
    }

    /// Reads a price, its product as an id even when expanded.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        unitAmount = try container.decodeIfPresent(Int.self, forKey: .unitAmount)
        currency = try container.decode(String.self, forKey: .currency)
        recurring = try container.decodeIfPresent(Recurring.self, forKey: .recurring)
        product = try container.decodeExpandableID(forKey: .product)
        active = try container.decodeIfPresent(Bool.self, forKey: .active) ?? true
    }
}

extension StripeClient {
    /// The price `id`: Stripe's price, or, when Stripe knows no price of that ID (404
    /// `resource_missing`), the plan of that ID read as a price (a plan's ID is accepted where a
    /// price's is, and an emulator may know plans only). A ``StripeError/Kind/notFound`` error
    /// when neither exists.
    func retrievePrice(_ id: String) async throws(StripeError) -> StripePrice {
        do {
            return try await send(.get, "/v1/prices/\(Self.segment(id))")
        } catch where error.kind == .notFound && (error.code == nil || error.code == "resource_missing") {
            let plan: StripePlan = try await send(.get, "/v1/plans/\(Self.segment(id))")
            return StripePrice(plan: plan)
        }
    }
}
