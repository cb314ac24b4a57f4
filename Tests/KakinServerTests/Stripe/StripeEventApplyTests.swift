import Foundation
import KakinLedger
import KakinTestSupport
import KakinWire
import Synchronization
import Testing

@testable import KakinServer

/// What applying Stripe's events does to the ledger, against the emulator: web purchases made by
/// the checkout are recorded and granted as their App Store siblings, once; refunds take back.
@Suite(
    "Stripe events applied: web purchases granted, renewed and taken back",
    .enabled(if: StripeEmulator.available, StripeEmulator.skipMessage))
struct StripeEventApplyTests {
    /// A checkout server on the emulator, its clock at the real time (Stripe's dates are real).
    static func server() async throws -> (CheckoutServer, [String: String]) {
        let (server, plans) = try await CheckoutEmulatorTests.server()
        server.clock.advance(Date().timeIntervalSince(server.clock.now()))
        return (server, plans)
    }

    /// Pays for `product` through the checkout as `user` with a card that is accepted.
    static func buy(_ product: String, as user: String, on server: CheckoutServer) async throws -> CheckoutPayment {
        let request = try await CheckoutEmulatorTests.request(server, product: product, user: user, card: "4242424242424242")
        return try await WebCheckout(service: server.service).pay(request, bundleID: CheckoutServer.bundleID)
    }

    /// Posts a webhook as Stripe would: an event of `type` about `object`, signed with the app's
    /// secret, then applies the app's events.
    static func deliver(_ type: String, object: String, on server: CheckoutServer) async throws {
        // Time passes (the server's clock is the tests'): what is read of Stripe now is newer.
        server.clock.advance(max(1, Date().timeIntervalSince(server.clock.now()) + 1))
        let objectType = object.hasPrefix("ch_") ? "charge" : object.hasPrefix("sub_") ? "subscription" : "dispute"
        let body = Data(
            """
            {"id": "evt_\(UUID().uuidString.prefix(12))", "object": "event", "api_version": "2024-06-20",
             "created": \(Int(Date().timeIntervalSince1970)), "livemode": false, "type": "\(type)",
             "data": {"object": {"id": "\(object)", "object": "\(objectType)"}}}
            """.utf8)
        let header = StripeSignature.header(for: body, secret: "whsec_0123456789", timestamp: Date())
        let receipt = try await server.service.receiveStripeEvent(
            bundleID: CheckoutServer.bundleID, signature: header, body: body)
        #expect(receipt.status == "recorded")
        let run = try await server.service.applyStripeEvents(bundleID: CheckoutServer.bundleID)
        #expect(!run.stoppedEarly)
        let event = try await server.service.stripeEvents?.stripeEvent(bundleID: CheckoutServer.bundleID, eventID: receipt.eventId)
        #expect(event?.appliedAt != nil, "\(event?.failure ?? "")")
    }

    /// Records what the emulator made (no webhook reaches these servers) and applies it.
    static func catchUp(_ server: CheckoutServer) async throws -> PurchaseService.StripeEventsApplied {
        _ = try await server.service.reconcileStripeEvents(bundleID: CheckoutServer.bundleID)
        return try await server.service.applyStripeEvents(bundleID: CheckoutServer.bundleID)
    }

    /// A customer subscribed on the web to the monthly product through the checkout, the events
    /// applied: the customer and the subscription's first period.
    static func subscribed(on server: CheckoutServer) async throws -> (user: String, period: RecordedTransaction) {
        let user = "web-\(UUID().uuidString)"
        _ = try await buy(CheckoutServer.monthly, as: user, on: server)
        _ = try await catchUp(server)
        let period = try #require(
            try await server.service.customer(bundleID: CheckoutServer.bundleID, appUserID: user).state.transactions.first)
        return (user, period)
    }

    /// A payment made as the checkout makes it, straight through Stripe's API with a card that is
    /// accepted: `amount` of `currency` for `user`, with `metadata`.
    static func pay(
        _ amount: Int, _ currency: String, as user: String, client: StripeClient, metadata: [String: String]
    ) async throws -> StripePaymentIntent {
        let customer = try await client.createCustomer(metadata: [StripeMetadata.appUserID: user])
        let method = try await client.createCardPaymentMethod(
            number: "4242424242424242", expMonth: 12, expYear: 2034, cvc: "123")
        _ = try await client.attachPaymentMethod(method.id, to: customer.id)
        return try await client.createPaymentIntent(
            amount: amount, currency: currency, customer: customer.id, paymentMethod: method.id, confirm: true,
            metadata: metadata)
    }

    @Test func aOneTimeWebPurchaseGrantsItsSiblingsEntitlementOnceAndARefundTakesItBack() async throws {
        let (server, _) = try await Self.server()
        let user = "web-\(UUID().uuidString)"
        let payment = try await Self.buy(CheckoutServer.unlock, as: user, on: server)
        let intentID = try #require(payment.clientSecret?.components(separatedBy: "_secret_").first)
        _ = try await Self.catchUp(server)

        var customer = try await server.service.customer(bundleID: CheckoutServer.bundleID, appUserID: user)
        let unlock = try #require(customer.entitlements.first { $0.identifier == "unlock" })
        #expect(unlock.isActive)
        #expect(unlock.store == .stripe)
        #expect(unlock.environment == .sandbox)
        #expect(unlock.transactionID == intentID)
        let transaction = try #require(customer.state.transactions.first)
        #expect(customer.state.transactions.count == 1)
        #expect(transaction.productType == .nonConsumable)
        #expect(transaction.price == 9_990, "9.99 USD in milliunits")
        #expect(transaction.currency == "USD")
        #expect(transaction.store == .stripe)

        // Applying the same events again records nothing twice.
        _ = try await server.service.stripeEvents?.recordStripeEvent(
            StripeEventRecord(
                bundleID: CheckoutServer.bundleID, eventID: "evt_again_\(intentID)", type: "payment_intent.succeeded",
                objectID: intentID, livemode: false, createdAt: Date(), receivedAt: Date(), payload: "{}"))
        _ = try await server.service.applyStripeEvents(bundleID: CheckoutServer.bundleID)
        customer = try await server.service.customer(bundleID: CheckoutServer.bundleID, appUserID: user)
        #expect(customer.state.transactions.count == 1)

        // A refund in Stripe, announced by `charge.refunded` (the emulator sends none).
        let client = try CheckoutEmulatorTests.client()
        let intent = try await client.retrievePaymentIntent(intentID)
        _ = try await client.createRefund(of: .paymentIntent(intentID))
        try await Self.deliver("charge.refunded", object: try #require(intent.latestCharge), on: server)
        customer = try await server.service.customer(bundleID: CheckoutServer.bundleID, appUserID: user)
        let refunded = try #require(customer.entitlements.first { $0.identifier == "unlock" })
        #expect(!refunded.isActive)
        #expect(refunded.revocationDate != nil)
    }

    @Test func aWebSubscriptionIsAPeriodOfItsSiblingWithItsRenewalState() async throws {
        let (server, _) = try await Self.server()
        let user = "web-\(UUID().uuidString)"
        let payment = try await Self.buy(CheckoutServer.monthly, as: user, on: server)
        #expect(payment.kind == "subscription")
        _ = try await Self.catchUp(server)

        var customer = try await server.service.customer(bundleID: CheckoutServer.bundleID, appUserID: user)
        let premium = try #require(customer.entitlements.first { $0.identifier == "premium" })
        #expect(premium.isActive)
        #expect(premium.store == .stripe)
        #expect(premium.willRenew == true)
        #expect(premium.periodType == .normal)
        let period = try #require(customer.state.transactions.first)
        #expect(period.transactionID.hasPrefix("in_"))
        #expect(period.originalTransactionID.hasPrefix("sub_"))
        #expect(period.productType == .autoRenewableSubscription)
        #expect(period.price == 4_990)
        let expires = try #require(period.expiresDate)
        #expect(expires.timeIntervalSince(period.purchaseDate) > 27 * 86_400, "a month's period")

        // Cancelled at the period's end: still active until then, and no longer renewing.
        let client = try CheckoutEmulatorTests.client()
        _ = try await client.cancelSubscriptionAtPeriodEnd(period.originalTransactionID)
        try await Self.deliver("customer.subscription.updated", object: period.originalTransactionID, on: server)
        customer = try await server.service.customer(bundleID: CheckoutServer.bundleID, appUserID: user)
        let cancelled = try #require(customer.entitlements.first { $0.identifier == "premium" })
        #expect(cancelled.isActive)
        #expect(cancelled.willRenew == false)
        #expect(customer.state.transactions.count == 1, "the same period, recorded once")
    }

    @Test func aRenewalWhoseCardIsDeclinedIsABillingProblemInTheGracePeriod() async throws {
        let (server, _) = try await Self.server()
        let (user, period) = try await Self.subscribed(on: server)
        let paidEnd = try #require(period.expiresDate)

        // The card on file now needs the customer's authentication, which fails when Stripe bills
        // the next period (the emulator's way to a failed renewal: a card it declines outright
        // leaves the invoice open without a word).
        let client = try CheckoutEmulatorTests.client()
        let subscription = try await client.retrieveSubscription(period.originalTransactionID)
        let card = try await client.addCardSource(
            customer: subscription.customer, token: try await CheckoutEmulatorTests.token("4000002760003184"),
            idempotencyKey: UUID().uuidString)
        var customerForm = StripeForm()
        customerForm.append(card, at: "default_source")
        let _: StripeObjectID = try await client.send(
            .post, "/v1/customers/\(subscription.customer)", form: customerForm)
        var invoiceForm = StripeForm()
        invoiceForm.append(subscription.customer, at: "customer")
        invoiceForm.append(subscription.id, at: "subscription")
        let renewal: StripeInvoice = try await client.send(.post, "/v1/invoices", form: invoiceForm)
        let billed: StripeInvoice = try await client.send(.post, "/v1/invoices/\(renewal.id)/pay")
        let intent = try await client.retrievePaymentIntent(try #require(billed.paymentIntent))
        #expect(intent.status == .requiresAction)
        var authentication = StripeForm()
        authentication.append(intent.clientSecret, at: "client_secret")
        authentication.append(false, at: "success")
        let _: StripeObjectID = try await client.send(
            .post, "/v1/payment_intents/\(intent.id)/_authenticate", form: authentication)
        #expect(try await client.retrieveSubscription(subscription.id).status == .pastDue)

        server.clock.advance(1)
        _ = try await Self.catchUp(server)
        let customer = try await server.service.customer(bundleID: CheckoutServer.bundleID, appUserID: user)
        let premium = try #require(customer.entitlements.first { $0.identifier == "premium" })
        #expect(premium.isActive)
        #expect(premium.billingIssueDetectedAt != nil)
        #expect(premium.gracePeriodExpiresAt == paidEnd.addingTimeInterval(PurchaseService.stripeGracePeriod))
        #expect(customer.state.transactions.count == 1, "the unpaid invoice is no period")

        // Past the paid period, the grace period keeps access; past the grace period, it ends.
        server.clock.advance(paidEnd.timeIntervalSince(server.clock.now()) + 86_400)
        var later = try await server.service.customer(bundleID: CheckoutServer.bundleID, appUserID: user)
        #expect(later.entitlements.first { $0.identifier == "premium" }?.isActive == true)
        server.clock.advance(PurchaseService.stripeGracePeriod)
        later = try await server.service.customer(bundleID: CheckoutServer.bundleID, appUserID: user)
        #expect(later.entitlements.first { $0.identifier == "premium" }?.isActive == false)
    }

    @Test func aRefundOfPartOfAConsumableTakesBackItsShareOfTheCurrency() async throws {
        let (server, _) = try await Self.server()
        let client = try CheckoutEmulatorTests.client()
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let plan = try await client.createPlan(
            id: "kakin_credits_\(suffix)", amount: 1200, currency: "jpy", interval: "month", productName: "credits")
        var account = try #require(try server.service.app(CheckoutServer.bundleID).stripe)
        account.products.append(.init(productID: "com.example.kakin.credits5", price: plan.id))
        // A payment as the checkout makes it, for 1,200 JPY.
        let user = "web-\(UUID().uuidString)"
        let intent = try await Self.pay(
            1200, "jpy", as: user, client: client,
            metadata: [
                StripeMetadata.appUserID: user, StripeMetadata.productID: "com.example.kakin.credits5",
                StripeMetadata.price: plan.id, StripeMetadata.quantity: "1",
            ])
        #expect(intent.status == .succeeded)
        let web = StripeWebPurchases(
            service: server.service, app: try server.service.app(CheckoutServer.bundleID), account: account,
            client: client)
        func apply(_ type: String, _ object: String) async throws {
            try await web.apply(
                StripeEventRecord(
                    bundleID: CheckoutServer.bundleID, eventID: "evt_\(UUID().uuidString)", type: type,
                    objectID: object, livemode: false, createdAt: Date(), receivedAt: Date(), payload: "{}"))
        }
        try await apply("payment_intent.succeeded", intent.id)
        var state = try await server.service.customer(bundleID: CheckoutServer.bundleID, appUserID: user).state
        #expect(state.balances["credits"] == 5)
        #expect(state.transactions.first?.price == 1_200_000, "1,200 JPY (no minor unit) in milliunits")
        #expect(state.transactions.first?.currency == "JPY")

        // 600 of 1,200 JPY refunded: half the share, half the credits.
        _ = try await client.createRefund(of: .paymentIntent(intent.id), amount: 600)
        try await apply("charge.refunded", try #require(intent.latestCharge))
        state = try await server.service.customer(bundleID: CheckoutServer.bundleID, appUserID: user).state
        #expect(state.transactions.first?.revocationDate != nil)
        #expect(state.balances["credits"] == 3, "5 less half of 5, rounded as the clawback rounds")
    }

    @Test func aPaymentOfAProductTheAccountDoesNotSellFailsAndStaysToApply() async throws {
        let (server, _) = try await Self.server()
        let client = try CheckoutEmulatorTests.client()
        let intent = try await Self.pay(
            100, "usd", as: "web-unknown", client: client,
            metadata: [StripeMetadata.appUserID: "web-unknown", StripeMetadata.productID: "com.example.kakin.soundPack"])
        let inbox = try #require(server.service.stripeEvents)
        let eventID = "evt_unknown_\(intent.id)"
        _ = try await inbox.recordStripeEvent(
            StripeEventRecord(
                bundleID: CheckoutServer.bundleID, eventID: eventID, type: "payment_intent.succeeded",
                objectID: intent.id, livemode: false, createdAt: Date(), receivedAt: Date(), payload: "{}"))
        let run = try await server.service.applyStripeEvents(bundleID: CheckoutServer.bundleID)
        #expect(run.failed >= 1)
        #expect(!run.stoppedEarly, "a product the account does not sell does not hold the events after it")
        let event = try #require(try await inbox.stripeEvent(bundleID: CheckoutServer.bundleID, eventID: eventID))
        #expect(event.appliedAt == nil)
        #expect(event.failure?.contains("not one of the account's web products") == true)
        let state = try await server.service.customer(bundleID: CheckoutServer.bundleID, appUserID: "web-unknown").state
        #expect(state.transactions.isEmpty)
    }
}

/// Recorded answers of Stripe's API by method and path, for what the emulator cannot do (past-due
/// subscriptions, disputes); a path without one is Stripe's 404.
final class StripeRecordedAnswers: HTTPExchange {
    private let answers = Mutex<[String: String]>([:])

    /// Answers `GET path` with `json` from now on.
    func set(_ path: String, _ json: String) { answers.withLock { $0["GET " + path] = json } }

    func send(method: String, url: URL, headers: [String: String], body: Data?) async throws -> (status: Int, body: Data) {
        let answer = try await answer(method: method, url: url, headers: headers, body: body)
        return (answer.status, answer.body)
    }

    func answer(method: String, url: URL, headers: [String: String], body: Data?) async throws -> HTTPAnswer {
        if let json = answers.withLock({ $0["\(method) \(url.path)"] }) {
            return HTTPAnswer(status: 200, body: Data(json.utf8), headers: [:])
        }
        let missing = #"{"error": {"type": "invalid_request_error", "code": "resource_missing", "message": "No such object"}}"#
        return HTTPAnswer(status: 404, body: Data(missing.utf8), headers: [:])
    }
}

/// Billing problems and disputes, from answers shaped as Stripe's API (version 2024-06-20) sends
/// them: the emulator never makes a subscription past due, and has no disputes.
@Suite("Stripe events applied: billing problems and disputes, from Stripe's recorded answers")
struct StripeRecordedEventApplyTests {
    static let user = "web-recorded"
    static let start = 1_795_000_000
    static let end = 1_795_000_000 + 30 * 86_400

    static func subscription(status: String, cancelAtPeriodEnd: Bool = false, periodStart: Int = start) -> String {
        """
        {"id": "sub_1", "object": "subscription", "customer": "cus_1", "status": "\(status)",
         "cancel_at_period_end": \(cancelAtPeriodEnd), "current_period_start": \(periodStart),
         "current_period_end": \(periodStart + 30 * 86_400), "created": \(start), "latest_invoice": "in_2",
         "trial_start": null, "trial_end": null, "canceled_at": null, "ended_at": null,
         "items": {"object": "list", "has_more": false, "data": [{"id": "si_1", "object": "subscription_item",
           "quantity": 1, "plan": {"id": "price_monthly", "object": "plan"},
           "price": {"id": "price_monthly", "object": "price"}}]},
         "metadata": {"kakin_app_user_id": "\(user)", "kakin_product_id": "com.example.kakin.premium.monthly"}}
        """
    }

    static func invoice(_ id: String, status: String, paid: Int, periodStart: Int) -> String {
        """
        {"id": "\(id)", "object": "invoice", "customer": "cus_1", "subscription": "sub_1", "status": "\(status)",
         "amount_due": 499, "amount_paid": \(paid), "currency": "usd", "billing_reason": "subscription_cycle",
         "payment_intent": "pi_\(id)", "charge": "ch_\(id)", "created": \(periodStart), "metadata": {},
         "period_start": \(periodStart), "period_end": \(periodStart),
         "lines": {"object": "list", "has_more": false, "data": [{"id": "il_\(id)", "object": "line_item",
           "amount": 499, "plan": {"id": "price_monthly", "object": "plan"},
           "period": {"start": \(periodStart), "end": \(periodStart + 30 * 86_400)}}]}}
        """
    }

    static func service(_ answers: StripeRecordedAnswers, clock: CheckoutClock) async throws -> PurchaseService {
        var account = CheckoutServer.account()
        account.products = [.init(productID: "com.example.kakin.premium.monthly", price: "price_monthly")]
        let store = try SQLiteLedger(path: nil)
        try await store.migrate()
        var app = ExampleApp.configuration(root: ServerFixture.authority.root, environments: [.sandbox])
        app.stripe = account
        return PurchaseService(
            store: store, apps: [app], grants: try ExampleApp.grants(), exchange: answers, now: { clock.now() })
    }

    static func apply(_ type: String, _ object: String, on service: PurchaseService, at seconds: Int) async throws {
        _ = try await service.stripeEvents?.recordStripeEvent(
            StripeEventRecord(
                bundleID: ServerFixture.bundleID, eventID: "evt_\(type)_\(seconds)", type: type, objectID: object,
                livemode: false, createdAt: Date(timeIntervalSince1970: TimeInterval(seconds)),
                receivedAt: Date(timeIntervalSince1970: TimeInterval(seconds)), payload: "{}"))
        let run = try await service.applyStripeEvents(bundleID: ServerFixture.bundleID)
        #expect(run.failed == 0)
    }

    static func premium(_ service: PurchaseService) async throws -> Entitlement? {
        try await service.customer(bundleID: ServerFixture.bundleID, appUserID: user).entitlements
            .first { $0.identifier == "premium" }
    }

    @Test func aFailedRenewalIsABillingProblemWithAGracePeriodThenUnpaidEndsIt() async throws {
        let answers = StripeRecordedAnswers()
        let clock = CheckoutClock(Date(timeIntervalSince1970: TimeInterval(Self.start + 86_400)))
        let service = try await Self.service(answers, clock: clock)
        answers.set("/v1/subscriptions/sub_1", Self.subscription(status: "active"))
        answers.set("/v1/invoices/in_1", Self.invoice("in_1", status: "paid", paid: 499, periodStart: Self.start))
        try await Self.apply("invoice.paid", "in_1", on: service, at: Self.start)
        #expect(try await Self.premium(service)?.isActive == true)

        // The renewal's payment fails: Stripe moves the period on and marks the subscription past due.
        clock.advance(30 * 86_400)
        answers.set("/v1/subscriptions/sub_1", Self.subscription(status: "past_due", periodStart: Self.end))
        answers.set("/v1/invoices/in_2", Self.invoice("in_2", status: "open", paid: 0, periodStart: Self.end))
        try await Self.apply("invoice.payment_failed", "in_2", on: service, at: Self.end + 60)
        let pastDue = try #require(try await Self.premium(service))
        #expect(pastDue.isActive, "in the grace period")
        #expect(pastDue.billingIssueDetectedAt == Date(timeIntervalSince1970: TimeInterval(Self.end + 60)))
        #expect(
            pastDue.gracePeriodExpiresAt
                == Date(timeIntervalSince1970: TimeInterval(Self.end)).addingTimeInterval(PurchaseService.stripeGracePeriod))
        #expect(pastDue.willRenew == true)

        // Paid at a retry: the next period, and the problem gone.
        answers.set("/v1/subscriptions/sub_1", Self.subscription(status: "active", periodStart: Self.end))
        answers.set("/v1/invoices/in_2", Self.invoice("in_2", status: "paid", paid: 499, periodStart: Self.end))
        try await Self.apply("invoice.paid", "in_2", on: service, at: Self.end + 3 * 86_400)
        let recovered = try #require(try await Self.premium(service))
        #expect(recovered.isActive)
        #expect(recovered.billingIssueDetectedAt == nil)
        #expect(recovered.transactionID == "in_2")

        // The next renewal fails for good: unpaid, and access ends with the paid period.
        clock.advance(30 * 86_400 + 86_400)
        answers.set("/v1/subscriptions/sub_1", Self.subscription(status: "unpaid", periodStart: Self.end + 30 * 86_400))
        try await Self.apply("customer.subscription.updated", "sub_1", on: service, at: Self.end + 31 * 86_400)
        let unpaid = try #require(try await Self.premium(service))
        #expect(!unpaid.isActive)
        #expect(unpaid.billingIssueDetectedAt != nil)
        #expect(unpaid.gracePeriodExpiresAt == nil)
    }

    @Test func aLostDisputeRevokesThePurchaseAWonOneDoesNot() async throws {
        let answers = StripeRecordedAnswers()
        let clock = CheckoutClock(Date(timeIntervalSince1970: TimeInterval(Self.start + 86_400)))
        let service = try await Self.service(answers, clock: clock)
        answers.set("/v1/subscriptions/sub_1", Self.subscription(status: "active"))
        answers.set("/v1/invoices/in_1", Self.invoice("in_1", status: "paid", paid: 499, periodStart: Self.start))
        try await Self.apply("invoice.paid", "in_1", on: service, at: Self.start)
        answers.set(
            "/v1/charges/ch_in_1",
            """
            {"id": "ch_in_1", "object": "charge", "amount": 499, "amount_refunded": 0, "currency": "usd",
             "customer": "cus_1", "payment_intent": "pi_in_1", "invoice": "in_1", "disputed": true,
             "created": \(Self.start)}
            """)
        answers.set(
            "/v1/payment_intents/pi_in_1",
            """
            {"id": "pi_in_1", "object": "payment_intent", "status": "succeeded", "amount": 499, "currency": "usd",
             "customer": "cus_1", "invoice": "in_1", "created": \(Self.start), "metadata": {}}
            """)
        for (status, seconds) in [("won", Self.start + 100), ("lost", Self.start + 200)] {
            answers.set(
                "/v1/disputes/dp_1",
                """
                {"id": "dp_1", "object": "dispute", "status": "\(status)", "amount": 499, "charge": "ch_in_1",
                 "created": \(Self.start + 50)}
                """)
            try await Self.apply("charge.dispute.closed", "dp_1", on: service, at: seconds)
            let premium = try #require(try await Self.premium(service))
            #expect(premium.isActive == (status == "won"), "\(status)")
        }
    }
}

/// A customer who pays for one entitlement in both stores is told of: a `subscription.duplicated`
/// event, and the customer's view.
@Suite(
    "Stripe events applied: one subscription paid in two stores",
    .enabled(if: StripeEmulator.available, StripeEmulator.skipMessage))
struct StripeDuplicateSubscriptionTests {
    @Test func anAppStoreSubscriptionBesideAnActiveWebOneIsADuplicatedSubscriptionEvent() async throws {
        let (server, _) = try await StripeEventApplyTests.server()
        let (user, web) = try await StripeEventApplyTests.subscribed(on: server)
        // Bought in the App Store a minute after the web subscription.
        server.clock.advance(web.purchaseDate.timeIntervalSince(server.clock.now()) + 60)
        let now = server.clock.now()
        let appStore = RecordedTransaction(
            transactionID: "2000000000\(Int.random(in: 100_000...999_999))", originalTransactionID: "2000000000000777",
            bundleID: CheckoutServer.bundleID, appUserID: user, productID: "com.example.kakin.premium.yearly",
            productType: .autoRenewableSubscription, purchaseDate: now, expiresDate: now.addingTimeInterval(365 * 86_400),
            environment: .sandbox, source: .app, recordedAt: now)
        _ = try await server.service.ingest(appStore, app: try server.service.app(CheckoutServer.bundleID))

        let customer = try await server.service.customer(bundleID: CheckoutServer.bundleID, appUserID: user)
        let duplicated = try #require(customer.duplicatedSubscriptions["premium"])
        #expect(duplicated.map(\.store) == [.stripe, .appStore])
        #expect(duplicated.map(\.originalTransactionID) == [web.originalTransactionID, "2000000000000777"])
        let events = try await server.service.outbox.claimDueEvents(
            endpoint: "test", now: now.addingTimeInterval(1), limit: 100, leaseUntil: now.addingTimeInterval(60))
        let duplicates = events.filter { $0.type == "subscription.duplicated" }
        #expect(duplicates.count == 1)
        let body = try #require(duplicates.first.map { String(decoding: $0.payload, as: UTF8.self) })
        #expect(
            body == #"{"entitlement":"premium","subscriptions":[{"originalTransactionId":"\#(web.originalTransactionID)","#
                + #""productId":"com.example.kakin.premium.monthly","store":"stripe"},{"originalTransactionId":"#
                + #""2000000000000777","productId":"com.example.kakin.premium.yearly","store":"appStore"}]}"#)

        // A renewal of either is no new duplicate.
        var renewal = appStore
        renewal.transactionID = "2000000000\(Int.random(in: 100_000...999_999))"
        renewal.purchaseDate = now.addingTimeInterval(1)
        _ = try await server.service.ingest(renewal, app: try server.service.app(CheckoutServer.bundleID))
        let later = try await server.service.outbox.claimDueEvents(
            endpoint: "test2", now: now.addingTimeInterval(2), limit: 100, leaseUntil: now.addingTimeInterval(60))
        #expect(later.filter { $0.type == "subscription.duplicated" }.count == 1)
    }
}
