import Foundation

extension StripeClient {
    /// Creates a customer with `email` and `metadata` (Kakin's own ids, such as
    /// `kakin_customer`). With `paymentMethod`, also attaches it to the customer and makes it
    /// the one Stripe charges for the customer's invoices (`invoice_settings[default_payment_method]`).
    func createCustomer(
        email: String? = nil, metadata: [String: String] = [:], paymentMethod: String? = nil,
        idempotencyKey: String? = nil
    ) async throws(StripeError) -> StripeCustomer {
        var form = StripeForm()
        form.append(email, at: "email")
        form.append(metadata: metadata)
        form.append(paymentMethod, at: "payment_method")
        form.append(paymentMethod, at: "invoice_settings", "default_payment_method")
        return try await send(.post, "/v1/customers", form: form, idempotencyKey: idempotencyKey)
    }

    /// The customer `id`; a ``StripeError/Kind/notFound`` error when Stripe knows none.
    func retrieveCustomer(_ id: String) async throws(StripeError) -> StripeCustomer {
        try await send(.get, "/v1/customers/\(Self.segment(id))")
    }

    /// Creates a card payment method from a card's number, for tests and set-up against a test
    /// mode account or an emulator only: a live account refuses raw card numbers from a server
    /// (cards are collected by Stripe's own pages and libraries, which hand over a payment
    /// method's id).
    func createCardPaymentMethod(
        number: String, expMonth: Int, expYear: Int, cvc: String, idempotencyKey: String? = nil
    ) async throws(StripeError) -> StripePaymentMethod {
        var form = StripeForm()
        form.append("card", at: "type")
        form.append(number, at: "card", "number")
        form.append(expMonth, at: "card", "exp_month")
        form.append(expYear, at: "card", "exp_year")
        form.append(cvc, at: "card", "cvc")
        return try await send(.post, "/v1/payment_methods", form: form, idempotencyKey: idempotencyKey)
    }

    /// Attaches the payment method `id` to `customer`, so it can pay for the customer later. A
    /// card refused when attached is a ``StripeError/Kind/card`` error.
    func attachPaymentMethod(
        _ id: String, to customer: String, idempotencyKey: String? = nil
    ) async throws(StripeError) -> StripePaymentMethod {
        var form = StripeForm()
        form.append(customer, at: "customer")
        return try await send(
            .post, "/v1/payment_methods/\(Self.segment(id))/attach", form: form, idempotencyKey: idempotencyKey)
    }
}
