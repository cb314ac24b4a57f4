import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import KakinTestSupport
import KakinWire
import Testing

@testable import KakinServer

/// The checkout's payment against localstripe: what it creates carries exactly the metadata
/// the contract with the applier of Stripe's events names.
@Suite("Checkout: paying against the Stripe emulator", .enabled(if: StripeEmulator.available, StripeEmulator.skipMessage))
struct CheckoutEmulatorTests {
    /// A client of the emulator that sends each call once.
    static func client() throws -> StripeClient {
        var client = StripeClient(secretKey: StripeEmulator.secretKey, baseURL: try #require(StripeEmulator.url))
        client.attempts = 1
        return client
    }

    /// A server whose app's prices are new plans in the emulator (the emulator has no prices):
    /// 9.99 USD a month for the one-time unlock, 4.99 USD a month for the monthly subscription,
    /// 49.99 USD a year with a 7-day trial for the yearly one.
    static func server() async throws -> (CheckoutServer, [String: String]) {
        let client = try client()
        let suffix = UUID().uuidString.prefix(8).lowercased()
        var plans: [String: String] = [:]
        for (name, amount, interval) in [("unlock", 999, "month"), ("monthly", 499, "month"), ("yearly", 4999, "year")] {
            plans[name] = try await client.createPlan(
                id: "kakin_\(name)_\(suffix)", amount: amount, currency: "usd", interval: interval, productName: name
            ).id
        }
        var account = CheckoutServer.account(apiBase: try #require(StripeEmulator.url), secretKey: StripeEmulator.secretKey)
        account.products = [
            .init(productID: CheckoutServer.unlock, price: plans["unlock"]!),
            .init(productID: CheckoutServer.monthly, price: plans["monthly"]!),
            .init(productID: "com.example.kakin.premium.yearly", price: plans["yearly"]!, trialDays: 7),
        ]
        return (try await CheckoutServer(exchange: URLSessionExchange(), account: account), plans)
    }

    /// A signed link's fields for `product`, with a card token the emulator made of `card`.
    static func request(_ server: CheckoutServer, product: String, user: String, card: String?) async throws
        -> WebCheckout.PayRequest
    {
        let account = try #require(try server.service.app(CheckoutServer.bundleID).stripe)
        let link = CheckoutLink(
            bundleID: CheckoutServer.bundleID, appUserID: user, productID: product, returnURL: "myapp://checkout",
            expiresAt: server.clock.now().addingTimeInterval(CheckoutLink.lifetime))
        let fields = link.fields(with: CheckoutLink.Key(stripeSecretKey: account.secretKey))
        var token: String?
        if let card { token = try await Self.token(card) }
        return WebCheckout.PayRequest(
            appUserId: user, productId: product, returnUrl: "myapp://checkout", expires: fields["expires"]!,
            signature: fields["signature"]!, cardToken: token)
    }

    /// A card token, made as the emulator's Stripe.js stand-in makes one: with the publishable key.
    static func token(_ number: String) async throws -> String {
        let url = try #require(StripeEmulator.url).appendingPathComponent("v1/tokens")
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(
            "card[number]=\(number)&card[exp_month]=12&card[exp_year]=2034&card[cvc]=123&key=pk_test_checkout".utf8)
        let (data, _) = try await URLSession.shared.data(for: request)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try #require(object["id"] as? String)
    }

    @Test func aOneTimeProductIsAPaymentIntentWithTheContractsMetadata() async throws {
        let (server, plans) = try await Self.server()
        let checkout = WebCheckout(service: server.service)
        let user = "web-\(UUID().uuidString)"
        let request = try await Self.request(server, product: CheckoutServer.unlock, user: user, card: "4242424242424242")
        let answer = try await checkout.pay(request, bundleID: CheckoutServer.bundleID)
        #expect(answer.kind == "payment")
        #expect(answer.status == "succeeded")
        let secret = try #require(answer.clientSecret)
        let intent = try await Self.client().retrievePaymentIntent(secret.components(separatedBy: "_secret_")[0])
        #expect(intent.status == .succeeded)
        #expect(intent.amount == 999)
        #expect(intent.currency == "usd")
        #expect(
            intent.metadata == [
                "kakin_app_user_id": user, "kakin_product_id": CheckoutServer.unlock, "kakin_price": plans["unlock"]!,
                "kakin_quantity": "1",
            ])
        let customer = try await Self.client().retrieveCustomer(try #require(intent.customer))
        #expect(customer.metadata == ["kakin_app_user_id": user, "kakin_bundle_id": CheckoutServer.bundleID])
    }

    @Test func withoutACardThePaymentWaitsForTheBrowser() async throws {
        let (server, _) = try await Self.server()
        let request = try await Self.request(server, product: CheckoutServer.unlock, user: "web-1", card: nil)
        let answer = try await WebCheckout(service: server.service).pay(request, bundleID: CheckoutServer.bundleID)
        #expect(answer.kind == "payment")
        #expect(answer.status == "requires_payment_method")
        #expect(answer.clientSecret?.contains("_secret_") == true)
    }

    @Test func aDeclinedCardIsAPaymentDeclined() async throws {
        let (server, _) = try await Self.server()
        let request = try await Self.request(server, product: CheckoutServer.unlock, user: "web-2", card: "4000000000000002")
        let error = await #expect(throws: ServerError.self) {
            try await WebCheckout(service: server.service).pay(request, bundleID: CheckoutServer.bundleID)
        }
        #expect(error?.code == .paymentDeclined)
        #expect(error?.httpStatus == 402)
        #expect(error?.cause == "card_declined")
    }

    @Test func aSubscriptionCarriesTheContractsMetadataAndPlan() async throws {
        let (server, plans) = try await Self.server()
        let user = "web-\(UUID().uuidString)"
        let request = try await Self.request(server, product: CheckoutServer.monthly, user: user, card: "4242424242424242")
        let answer = try await WebCheckout(service: server.service).pay(request, bundleID: CheckoutServer.bundleID)
        #expect(answer.kind == "subscription")
        #expect(answer.status == "active")
        let customers: StripeList<StripeCustomer> = try await Self.client().send(.get, "/v1/customers", form: {
            var form = StripeForm()
            form.append(100, at: "limit")
            return form
        }())
        let customer = try #require(customers.data.first { $0.metadata["kakin_app_user_id"] == user })
        #expect(customer.metadata == ["kakin_app_user_id": user, "kakin_bundle_id": CheckoutServer.bundleID])
        var form = StripeForm()
        form.append(customer.id, at: "customer")
        let subscriptions: StripeList<StripeSubscription> = try await Self.client().send(.get, "/v1/subscriptions", form: form)
        let subscription = try #require(subscriptions.data.first)
        #expect(subscriptions.data.count == 1)
        #expect(subscription.metadata == ["kakin_app_user_id": user, "kakin_product_id": CheckoutServer.monthly])
        #expect(subscription.items.map(\.plan) == [plans["monthly"]!])
        #expect(subscription.status == .active)
    }

    @Test func aTrialStartsWithNothingToPay() async throws {
        let (server, _) = try await Self.server()
        let request = try await Self.request(
            server, product: "com.example.kakin.premium.yearly", user: "web-trial", card: "4242424242424242")
        let answer = try await WebCheckout(service: server.service).pay(request, bundleID: CheckoutServer.bundleID)
        #expect(answer.kind == "setup")
        #expect(answer.clientSecret == nil)
        // The emulator leaves a trial's subscription `incomplete` (Stripe says `trialing`).
        #expect(answer.status == "incomplete" || answer.status == "trialing")
    }

    @Test func thePriceOfAPlanIsReadWhereStripeKnowsNoPrice() async throws {
        let client = try Self.client()
        let plan = try await client.createPlan(
            id: "kakin_price_\(UUID().uuidString.prefix(8).lowercased())", amount: 1200, currency: "jpy",
            interval: "month", intervalCount: 3, productName: "Quarterly")
        let price = try await client.retrievePrice(plan.id)
        #expect(price.unitAmount == 1200)
        #expect(price.currency == "jpy")
        #expect(price.recurring == .init(interval: "month", intervalCount: 3))
        let missing = await #expect(throws: StripeError.self) { try await client.retrievePrice("price_nothing") }
        #expect(missing?.kind == .notFound)
    }
}
