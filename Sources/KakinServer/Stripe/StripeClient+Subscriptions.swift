import Foundation

extension StripeClient {
    /// Creates a plan of `amount` (minor units) in `currency` every `intervalCount` `interval`s
    /// (`day`, `week`, `month`, `year`), with a new product named `productName`.
    ///
    /// For tests and set-up: a real deployment configures its products and prices in Stripe's
    /// dashboard and gives Kakin their ids. The emulator the tests run against knows plans only,
    /// and Stripe takes a plan's id wherever a price's goes.
    func createPlan(
        id: String? = nil, amount: Int, currency: String, interval: String, intervalCount: Int = 1,
        productName: String, metadata: [String: String] = [:], idempotencyKey: String? = nil
    ) async throws(StripeError) -> StripePlan {
        var form = StripeForm()
        form.append(id, at: "id")
        form.append(amount, at: "amount")
        form.append(currency, at: "currency")
        form.append(interval, at: "interval")
        form.append(intervalCount, at: "interval_count")
        form.append(productName, at: "product", "name")
        form.append(metadata: metadata)
        return try await send(.post, "/v1/plans", form: form, idempotencyKey: idempotencyKey)
    }

    /// Subscribes `customer` to `plan` (a plan's or a price's id, sent as the item's `plan`).
    ///
    /// A trial is either `trialPeriodDays` long or lasts until `trialEnd`; without one, Stripe
    /// invoices the first period at once and charges `defaultPaymentMethod`, or else the
    /// customer's default payment method.
    func createSubscription(
        customer: String, plan: String, trialPeriodDays: Int? = nil, trialEnd: Date? = nil,
        defaultPaymentMethod: String? = nil, metadata: [String: String] = [:], idempotencyKey: String? = nil
    ) async throws(StripeError) -> StripeSubscription {
        var form = StripeForm()
        form.append(customer, at: "customer")
        form.append(plan, at: "items", "0", "plan")
        form.append(trialPeriodDays, at: "trial_period_days")
        form.append(trialEnd, at: "trial_end")
        form.append(defaultPaymentMethod, at: "default_payment_method")
        form.append(metadata: metadata)
        return try await send(.post, "/v1/subscriptions", form: form, idempotencyKey: idempotencyKey)
    }

    /// The subscription `id`.
    func retrieveSubscription(_ id: String) async throws(StripeError) -> StripeSubscription {
        try await send(.get, "/v1/subscriptions/\(Self.segment(id))")
    }

    /// Asks for the subscription `id` to end at the end of its current period instead of
    /// renewing (`cancel_at_period_end=true`); it stays as it is until then.
    func cancelSubscriptionAtPeriodEnd(
        _ id: String, idempotencyKey: String? = nil
    ) async throws(StripeError) -> StripeSubscription {
        var form = StripeForm()
        form.append(true, at: "cancel_at_period_end")
        return try await send(
            .post, "/v1/subscriptions/\(Self.segment(id))", form: form, idempotencyKey: idempotencyKey)
    }

    /// Ends the subscription `id` now (`DELETE`); Stripe answers it `canceled`.
    func cancelSubscription(_ id: String, idempotencyKey: String? = nil) async throws(StripeError) -> StripeSubscription
    {
        try await send(.delete, "/v1/subscriptions/\(Self.segment(id))", idempotencyKey: idempotencyKey)
    }

    /// The invoice `id`, with the fields named in `expand` sent whole by Stripe (they are read
    /// as ids all the same).
    func retrieveInvoice(_ id: String, expand: [String] = []) async throws(StripeError) -> StripeInvoice {
        var form = StripeForm()
        form.append(list: expand, at: "expand")
        return try await send(.get, "/v1/invoices/\(Self.segment(id))", form: form)
    }
}
