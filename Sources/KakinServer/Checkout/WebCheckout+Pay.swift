import Foundation
import KakinWire

extension WebCheckout {
    /// The body the checkout page posts to pay: the signed link's fields, and, against an
    /// emulator, the token of the card the customer typed.
    struct PayRequest: Decodable, Sendable {
        var appUserId: String
        var productId: String
        var returnUrl: String
        var expires: String
        var signature: String
        /// The token (`tok_…`) Stripe.js made of the card, sent only to a server whose Stripe
        /// account is an emulator: its Stripe.js stand-in cannot confirm a payment with a card.
        var cardToken: String?

        /// The link's fields, as its query names them.
        var fields: [String: String] {
            [
                CheckoutLink.Field.appUserID: appUserId, CheckoutLink.Field.productID: productId,
                CheckoutLink.Field.returnURL: returnUrl, CheckoutLink.Field.expires: expires,
                CheckoutLink.Field.signature: signature,
            ]
        }
    }

    /// Starts paying for the signed link's product: creates the customer in Stripe, then a
    /// payment intent for a one-time product or a subscription, each with the contract's
    /// metadata and an idempotency key derived from the link's signature (a page that posts
    /// twice makes one customer and one payment), and answers what the page confirms.
    ///
    /// Against Stripe, the page confirms the payment with Stripe.js and the card it collected.
    /// Against an emulator, the page sends the card's token, and the server adds the card to the
    /// customer and confirms the payment itself (a subscription is created once the card is the
    /// customer's default, and its first invoice is charged at once).
    ///
    /// - Throws: as ``verify(_:bundleID:)`` and ``offer(_:productID:)``;
    ///   ``ServerError/Code/conflict`` (cause `alreadySubscribed`) for a subscription the
    ///   customer has active; ``ServerError/Code/paymentDeclined`` (402) for a refused card;
    ///   ``ServerError/Code/invalidRequest`` for a card token sent to a server on Stripe's API.
    func pay(_ request: PayRequest, bundleID: String) async throws -> CheckoutPayment {
        let (app, link, signature) = try verify(request.fields, bundleID: bundleID)
        let offer = try await offer(app, productID: link.productID)
        let emulated = !offer.account.isStripeHost
        if request.cardToken != nil, !emulated {
            throw ServerError(
                .invalidRequest, "cardToken is for an emulator only: Stripe.js confirms the payment with Stripe",
                cause: "cardTokenRefused")
        }
        if let token = request.cardToken, !token.hasPrefix("tok_") || token.count > 255 {
            throw ServerError(.invalidRequest, "cardToken is not a card token (tok_…)")
        }
        if offer.kind == .subscription {
            try await checkNotSubscribed(app, appUserID: link.appUserID, productID: link.productID)
        }
        let stripe = client(offer.account)
        let key = "kakin-checkout-" + signature
        do {
            let customer = try await stripe.createCustomer(
                metadata: [StripeMetadata.appUserID: link.appUserID, StripeMetadata.bundleID: app.bundleID],
                idempotencyKey: key + "-customer")
            var card: String?
            if let token = request.cardToken {
                card = try await stripe.addCardSource(
                    customer: customer.id, token: token, idempotencyKey: key + "-card-" + token)
            }
            switch offer.kind {
            case .payment:
                var intent = try await stripe.createPaymentIntent(
                    amount: offer.amount, currency: offer.price.currency, customer: customer.id,
                    metadata: [
                        StripeMetadata.appUserID: link.appUserID, StripeMetadata.productID: link.productID,
                        StripeMetadata.price: offer.product.price, StripeMetadata.quantity: "1",
                    ], idempotencyKey: key + "-payment")
                if let card, let token = request.cardToken, intent.status != .succeeded {
                    intent = try await stripe.setPaymentMethod(
                        card, ofPaymentIntent: intent.id, idempotencyKey: key + "-method-" + token)
                    intent = try await stripe.confirmPaymentIntent(intent.id, idempotencyKey: key + "-confirm-" + token)
                }
                return CheckoutPayment(kind: Kind.payment.rawValue, clientSecret: intent.clientSecret, status: intent.status.rawValue)
            case .subscription:
                let created = try await stripe.createCheckoutSubscription(
                    customer: customer.id, plan: offer.product.price, trialPeriodDays: offer.product.trialDays,
                    metadata: [StripeMetadata.appUserID: link.appUserID, StripeMetadata.productID: link.productID],
                    awaitingPayment: !emulated, idempotencyKey: key + "-subscription")
                // A trial has nothing to pay now. (The emulator never says `trialing`: it leaves a
                // trial's subscription `incomplete`, without an invoice.)
                if created.subscription.status == .trialing
                    || (offer.product.trialDays != nil && created.paymentIntent == nil && emulated)
                {
                    return CheckoutPayment(
                        kind: "setup", clientSecret: created.setupIntentClientSecret,
                        status: created.subscription.status.rawValue)
                }
                if let intent = created.paymentIntent, intent.status == .requiresPaymentMethod || intent.status == .requiresAction
                    || intent.status == .requiresConfirmation
                {
                    return CheckoutPayment(
                        kind: Kind.subscription.rawValue, clientSecret: intent.clientSecret, status: intent.status.rawValue)
                }
                if created.subscription.status == .incomplete, emulated,
                    let message = created.paymentIntent?.lastPaymentError?.message
                {
                    throw ServerError(.paymentDeclined, message, cause: "card_declined")
                }
                return CheckoutPayment(
                    kind: Kind.subscription.rawValue, clientSecret: created.paymentIntent?.clientSecret,
                    status: created.subscription.status.rawValue)
            }
        } catch let error as StripeError {
            throw Self.failure(error)
        }
    }

    /// Refuses a subscription the customer already has: an active entitlement of `productID`
    /// that comes from a subscription (409, cause `alreadySubscribed`). An app never sells the
    /// same subscription twice.
    func checkNotSubscribed(_ app: AppConfiguration, appUserID: String, productID: String) async throws {
        let customer = try await service.customer(bundleID: app.bundleID, appUserID: appUserID)
        if customer.entitlements.contains(where: { $0.productID == productID && $0.isActive && $0.willRenew != nil }) {
            throw ServerError(
                .conflict, "the customer already has an active subscription to \(productID)", cause: "alreadySubscribed")
        }
    }
}
