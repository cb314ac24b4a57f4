import Foundation

/// A subscription as the checkout creates it, with what the customer's browser confirms: the
/// payment intent of its first invoice, or, for a trial, the setup intent that saves the card.
struct StripeCheckoutSubscription: Decodable, Sendable, Hashable {
    /// The subscription.
    var subscription: StripeSubscription
    /// The payment intent of the first invoice (`latest_invoice.payment_intent`, expanded);
    /// `nil` when the invoice needs no payment (a trial) or Stripe sent only IDs.
    var paymentIntent: StripePaymentIntent?
    /// The secret of the setup intent that saves the card of a trialing subscription
    /// (`pending_setup_intent`, expanded), when Stripe made one.
    var setupIntentClientSecret: String?

    enum CodingKeys: String, CodingKey {
        case latestInvoice = "latest_invoice"
        case pendingSetupIntent = "pending_setup_intent"
    }

    enum InvoiceKeys: String, CodingKey {
        case paymentIntent = "payment_intent"
    }

    enum SetupIntentKeys: String, CodingKey {
        case clientSecret = "client_secret"
    }

    /// Reads the subscription, and the expanded objects where Stripe sent them whole.
    init(from decoder: any Decoder) throws {
        subscription = try StripeSubscription(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let invoice = try? container.nestedContainer(keyedBy: InvoiceKeys.self, forKey: .latestInvoice) {
            paymentIntent = try? invoice.decodeIfPresent(StripePaymentIntent.self, forKey: .paymentIntent)
        }
        if let setup = try? container.nestedContainer(keyedBy: SetupIntentKeys.self, forKey: .pendingSetupIntent) {
            setupIntentClientSecret = try setup.decodeIfPresent(String.self, forKey: .clientSecret)
        }
    }
}

extension StripeClient {
    /// Subscribes `customer` to `plan` (a plan's or a price's ID, sent as the item's `plan`, which
    /// Stripe and the emulator both take), for the web checkout: the first invoice's payment
    /// intent and the trial's setup intent come expanded, for the customer's browser to confirm.
    ///
    /// With `awaitingPayment`, the subscription is created `incomplete` until the customer pays
    /// in the browser (`payment_behavior=default_incomplete`, the card saved as the
    /// subscription's default on payment); without it, Stripe charges the customer's default
    /// card at once (the emulator's only way: it knows no `default_incomplete`).
    func createCheckoutSubscription(
        customer: String, plan: String, trialPeriodDays: Int?, metadata: [String: String], awaitingPayment: Bool,
        idempotencyKey: String
    ) async throws(StripeError) -> StripeCheckoutSubscription {
        var form = StripeForm()
        form.append(customer, at: "customer")
        form.append(plan, at: "items", "0", "plan")
        form.append(trialPeriodDays, at: "trial_period_days")
        form.append(metadata: metadata)
        var expand = ["latest_invoice.payment_intent"]
        if awaitingPayment {
            form.append("default_incomplete", at: "payment_behavior")
            form.append("on_subscription", at: "payment_settings", "save_default_payment_method")
            expand.append("pending_setup_intent")
        }
        form.append(list: expand, at: "expand")
        return try await send(.post, "/v1/subscriptions", form: form, idempotencyKey: idempotencyKey)
    }

    /// Adds the card of the token `token` (`tok_…`, made by Stripe.js from the card a customer
    /// typed) to `customer`'s sources, where it becomes the default when the customer has none;
    /// answers the card's ID (`card_…`). A card refused when added is a ``StripeError/Kind/card``
    /// error. The emulator's way to bring a typed card to the server: its Stripe.js stand-in
    /// makes tokens but cannot confirm a payment with a card.
    func addCardSource(
        customer: String, token: String, idempotencyKey: String
    ) async throws(StripeError) -> String {
        var form = StripeForm()
        form.append(token, at: "source")
        let card: StripeObjectID = try await send(
            .post, "/v1/customers/\(Self.segment(customer))/sources", form: form, idempotencyKey: idempotencyKey)
        return card.id
    }

    /// Sets the payment method the payment intent `id` is to be paid with.
    func setPaymentMethod(
        _ paymentMethod: String, ofPaymentIntent id: String, idempotencyKey: String
    ) async throws(StripeError) -> StripePaymentIntent {
        var form = StripeForm()
        form.append(paymentMethod, at: "payment_method")
        return try await send(
            .post, "/v1/payment_intents/\(Self.segment(id))", form: form, idempotencyKey: idempotencyKey)
    }
}
