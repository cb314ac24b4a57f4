import Foundation

/// The payment a refund gives money back from.
enum StripeRefundedPayment: Sendable, Hashable {
    /// A payment intent's successful charge.
    case paymentIntent(String)
    /// A charge.
    case charge(String)
}

extension StripeClient {
    /// Creates a payment intent for `amount` (minor units) in `currency`, for `customer`, to be
    /// paid with `paymentMethod`. With `confirm`, Stripe also tries to pay at once: a card that
    /// is refused is a ``StripeError/Kind/card`` error whose code (`card_declined`…) says why,
    /// and the intent is left waiting for another payment method.
    func createPaymentIntent(
        amount: Int, currency: String, customer: String? = nil, paymentMethod: String? = nil,
        confirm: Bool = false, description: String? = nil, metadata: [String: String] = [:],
        idempotencyKey: String? = nil
    ) async throws(StripeError) -> StripePaymentIntent {
        var form = StripeForm()
        form.append(amount, at: "amount")
        form.append(currency, at: "currency")
        form.append(customer, at: "customer")
        form.append(paymentMethod, at: "payment_method")
        if confirm { form.append(true, at: "confirm") }
        form.append(description, at: "description")
        form.append(metadata: metadata)
        return try await send(.post, "/v1/payment_intents", form: form, idempotencyKey: idempotencyKey)
    }

    /// The payment intent `id`.
    func retrievePaymentIntent(_ id: String) async throws(StripeError) -> StripePaymentIntent {
        try await send(.get, "/v1/payment_intents/\(Self.segment(id))")
    }

    /// Confirms the payment intent `id`: Stripe tries to pay it with its payment method. A card
    /// that is refused is a ``StripeError/Kind/card`` error.
    func confirmPaymentIntent(
        _ id: String, idempotencyKey: String? = nil
    ) async throws(StripeError) -> StripePaymentIntent {
        try await send(.post, "/v1/payment_intents/\(Self.segment(id))/confirm", idempotencyKey: idempotencyKey)
    }

    /// Refunds `amount` (minor units) of `payment`, or all of what is left of it when `amount`
    /// is `nil`. Pass an idempotency key derived from Kakin's refund, so that a refund asked
    /// twice gives money back once.
    func createRefund(
        of payment: StripeRefundedPayment, amount: Int? = nil, metadata: [String: String] = [:],
        idempotencyKey: String? = nil
    ) async throws(StripeError) -> StripeRefund {
        var form = StripeForm()
        switch payment {
        case .paymentIntent(let id): form.append(id, at: "payment_intent")
        case .charge(let id): form.append(id, at: "charge")
        }
        form.append(amount, at: "amount")
        form.append(metadata: metadata)
        return try await send(.post, "/v1/refunds", form: form, idempotencyKey: idempotencyKey)
    }

    /// The charge `id`, with what was refunded of it.
    func retrieveCharge(_ id: String) async throws(StripeError) -> StripeCharge {
        try await send(.get, "/v1/charges/\(Self.segment(id))")
    }

    /// The dispute `id`.
    func retrieveDispute(_ id: String) async throws(StripeError) -> StripeDispute {
        try await send(.get, "/v1/disputes/\(Self.segment(id))")
    }
}
