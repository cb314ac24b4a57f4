import Foundation
import Synchronization
import Testing

@testable import KakinServer

/// One request a client sent.
private struct StripeSentRequest: Sendable {
    var method: String
    var url: URL
    var headers: [String: String]
    var body: String?
}

/// Records every request and answers from a script, one answer (or failure to answer) per
/// request; once the script is spent, answers `fallback`.
private actor StripeRecordingExchange: HTTPExchange {
    enum Reply: Sendable {
        case answer(HTTPAnswer)
        case noAnswer
    }

    private(set) var requests: [StripeSentRequest] = []
    private var script: [Reply]
    private let fallback: @Sendable (String, URL) -> HTTPAnswer

    init(_ script: [Reply] = [], fallback: @escaping @Sendable (String, URL) -> HTTPAnswer) {
        self.script = script
        self.fallback = fallback
    }

    func send(
        method: String, url: URL, headers: [String: String], body: Data?
    ) async throws -> (status: Int, body: Data) {
        let answer = try await answer(method: method, url: url, headers: headers, body: body)
        return (answer.status, answer.body)
    }

    func answer(method: String, url: URL, headers: [String: String], body: Data?) async throws -> HTTPAnswer {
        requests.append(
            StripeSentRequest(
                method: method, url: url, headers: headers, body: body.map { String(decoding: $0, as: UTF8.self) }))
        guard !script.isEmpty else { return fallback(method, url) }
        switch script.removeFirst() {
        case .answer(let answer): return answer
        case .noAnswer: throw URLError(.timedOut)
        }
    }
}

/// Counts the idempotency keys it makes (`key-1`, `key-2`…) and the waits asked for.
private final class Made: Sendable {
    private let count = Mutex(0)
    private let waits = Mutex<[Duration]>([])

    func key() -> String {
        let number = count.withLock { count in
            count += 1
            return count
        }
        return "key-\(number)"
    }
    func wait(_ duration: Duration) { waits.withLock { $0.append(duration) } }
    var allWaits: [Duration] { waits.withLock { $0 } }
}

/// Hand-written answers in the shape of Stripe's documented objects (API version 2024-06-20).
enum StripeShapes {
    static let customer =
        #"{"id":"cus_1","object":"customer","email":"a@example.com","metadata":{"kakin_customer":"c1"},"created":1700000000,"invoice_settings":{"default_payment_method":null},"livemode":false}"#
    static let paymentMethod =
        #"{"id":"pm_1","object":"payment_method","type":"card","customer":"cus_1","card":{"brand":"visa","last4":"4242","exp_month":12,"exp_year":2030},"created":1700000000}"#
    static let paymentIntent =
        #"{"id":"pi_1","object":"payment_intent","amount":2000,"currency":"eur","status":"succeeded","customer":"cus_1","payment_method":"pm_1","latest_charge":"ch_1","description":null,"metadata":{},"created":1700000000,"last_payment_error":null}"#
    static let refund =
        #"{"id":"re_1","object":"refund","amount":500,"currency":"eur","status":"succeeded","payment_intent":"pi_1","charge":"ch_1","metadata":{},"created":1700000000}"#
    static let plan =
        #"{"id":"plan_1","object":"plan","amount":999,"currency":"eur","interval":"month","interval_count":1,"product":"prod_1","active":true,"metadata":{},"created":1700000000}"#
    static let subscription =
        #"{"id":"sub_1","object":"subscription","customer":"cus_1","status":"active","cancel_at_period_end":false,"trial_start":null,"trial_end":null,"current_period_start":1700000000,"current_period_end":1702592000,"canceled_at":null,"ended_at":null,"latest_invoice":"in_1","items":{"object":"list","data":[{"id":"si_1","plan":{"id":"plan_1","object":"plan"},"quantity":1}],"has_more":false},"metadata":{},"created":1700000000}"#
    static let invoice =
        #"{"id":"in_1","object":"invoice","customer":"cus_1","subscription":"sub_1","payment_intent":"pi_1","charge":"ch_1","status":"paid","amount_due":999,"amount_paid":999,"currency":"eur","billing_reason":"subscription_create","period_start":1700000000,"period_end":1702592000,"lines":{"object":"list","data":[],"has_more":false},"metadata":{},"created":1700000000}"#
    static let events =
        #"{"object":"list","data":[{"id":"evt_1","object":"event","type":"invoice.paid","created":1700000001,"data":{"object":{"id":"in_1","object":"invoice"}}}],"has_more":true,"url":"/v1/events"}"#

    /// The answer Stripe would give to `method path`: the object the path names.
    static func answer(_ method: String, _ url: URL) -> HTTPAnswer {
        let objects = [
            "customers": customer, "payment_methods": paymentMethod, "payment_intents": paymentIntent,
            "refunds": refund, "plans": plan, "subscriptions": subscription, "invoices": invoice, "events": events,
        ]
        let parts = url.path.split(separator: "/")
        let body = parts.count > 1 ? objects[String(parts[1])] ?? "{}" : "{}"
        return HTTPAnswer(status: 200, body: Data(body.utf8), headers: ["request-id": "req_1"])
    }

    /// Stripe's error body with `type`, `code` and `message`.
    static func error(_ status: Int, type: String, code: String? = nil, headers: [String: String] = [:]) -> HTTPAnswer {
        let code = code.map { #","code":"\#($0)""# } ?? ""
        let body = #"{"error":{"type":"\#(type)"\#(code),"message":"refused"}}"#
        return HTTPAnswer(status: status, body: Data(body.utf8), headers: headers)
    }
}

@Suite("Stripe: the requests the client sends, and how it reads Stripe's answers")
struct StripeClientRequestTests {
    fileprivate func client(_ exchange: StripeRecordingExchange, made: Made, attempts: Int = 3) -> StripeClient {
        var client = StripeClient(
            secretKey: "sk_test_123", baseURL: URL(string: "https://stripe.example/")!, exchange: exchange)
        client.attempts = attempts
        client.makeIdempotencyKey = { made.key() }
        client.pause = { made.wait($0) }
        return client
    }

    @Test func aWriteCarriesTheCallersKeyTheVersionTheBearerKeyAndItsForm() async throws {
        let exchange = StripeRecordingExchange(fallback: StripeShapes.answer)
        let made = Made()
        let customer = try await client(exchange, made: made).createCustomer(
            email: "a+b@example.com", metadata: ["kakin_customer": "c1"], paymentMethod: "pm_1",
            idempotencyKey: "kakin-customer-c1")
        #expect(customer.id == "cus_1")
        let request = try #require(await exchange.requests.first)
        #expect(request.method == "POST")
        #expect(request.url.absoluteString == "https://stripe.example/v1/customers")
        #expect(
            request.headers == [
                "Authorization": "Bearer sk_test_123", "Stripe-Version": "2024-06-20", "Accept": "application/json",
                "Content-Type": "application/x-www-form-urlencoded", "Idempotency-Key": "kakin-customer-c1",
            ])
        #expect(
            request.body
                == "email=a%2Bb%40example.com&metadata[kakin_customer]=c1&payment_method=pm_1"
                + "&invoice_settings[default_payment_method]=pm_1")
        #expect(made.allWaits.isEmpty)
    }

    @Test func everyWriteCarriesAKeyOfItsOwnAndNoReadCarriesOne() async throws {
        let exchange = StripeRecordingExchange(fallback: StripeShapes.answer)
        let made = Made()
        let client = client(exchange, made: made)
        _ = try await client.createCustomer(email: "a@example.com")
        _ = try await client.retrieveCustomer("cus_1")
        _ = try await client.createCardPaymentMethod(
            number: "4242424242424242", expMonth: 12, expYear: 2030, cvc: "123")
        _ = try await client.attachPaymentMethod("pm_1", to: "cus_1")
        _ = try await client.createPaymentIntent(amount: 2000, currency: "eur")
        _ = try await client.retrievePaymentIntent("pi_1")
        _ = try await client.confirmPaymentIntent("pi_1")
        _ = try await client.createRefund(of: .charge("ch_1"))
        _ = try await client.createPlan(amount: 999, currency: "eur", interval: "month", productName: "Pro")
        _ = try await client.createSubscription(customer: "cus_1", plan: "plan_1")
        _ = try await client.retrieveSubscription("sub_1")
        _ = try await client.cancelSubscriptionAtPeriodEnd("sub_1")
        _ = try await client.cancelSubscription("sub_1")
        _ = try await client.retrieveInvoice("in_1")
        _ = try await client.listEvents(StripeEventQuery())
        let requests = await exchange.requests
        #expect(
            requests.map(\.method) == [
                "POST", "GET", "POST", "POST", "POST", "GET", "POST", "POST", "POST", "POST", "GET", "POST", "DELETE",
                "GET",
                "GET",
            ])
        let writes = requests.filter { $0.method != "GET" }
        #expect(writes.map { $0.headers["Idempotency-Key"] } == (1...10).map { "key-\($0)" })
        #expect(requests.filter { $0.method == "GET" }.allSatisfy { $0.headers["Idempotency-Key"] == nil })
        #expect(requests.allSatisfy { $0.headers["Stripe-Version"] == "2024-06-20" })
        #expect(requests.allSatisfy { $0.headers["Authorization"] == "Bearer sk_test_123" })
        #expect(requests.allSatisfy { ($0.body == nil) == ($0.headers["Content-Type"] == nil) })
    }

    @Test func eachCallSendsExactlyItsParameters() async throws {
        let exchange = StripeRecordingExchange(fallback: StripeShapes.answer)
        let client = client(exchange, made: Made())
        _ = try await client.createPaymentIntent(
            amount: 2000, currency: "eur", customer: "cus_1", paymentMethod: "pm_1", confirm: true,
            description: "Pro, one year", metadata: ["kakin_purchase": "p1"])
        _ = try await client.createSubscription(
            customer: "cus_1", plan: "plan_1", trialPeriodDays: 7, trialEnd: Date(timeIntervalSince1970: 1_700_604_800),
            defaultPaymentMethod: "pm_1", metadata: ["kakin_customer": "c1"])
        _ = try await client.createRefund(of: .paymentIntent("pi_1"), amount: 500, metadata: ["kakin_refund": "r1"])
        _ = try await client.createPlan(
            id: "pro_monthly", amount: 999, currency: "eur", interval: "month", productName: "Kakin Pro")
        _ = try await client.cancelSubscriptionAtPeriodEnd("sub_1")
        _ = try await client.retrieveInvoice("in_1", expand: ["subscription", "payment_intent"])
        _ = try await client.listEvents(
            StripeEventQuery(
                type: "invoice.paid", createdAfter: Date(timeIntervalSince1970: 1_700_000_000),
                createdFrom: Date(timeIntervalSince1970: 1_699_999_000), startingAfter: "evt_9", limit: 50))
        let requests = await exchange.requests
        #expect(
            requests.map(\.body) == [
                "amount=2000&currency=eur&customer=cus_1&payment_method=pm_1&confirm=true&description=Pro%2C%20one%20year"
                    + "&metadata[kakin_purchase]=p1",
                "customer=cus_1&items[0][plan]=plan_1&trial_period_days=7&trial_end=1700604800&default_payment_method=pm_1"
                    + "&metadata[kakin_customer]=c1",
                "payment_intent=pi_1&amount=500&metadata[kakin_refund]=r1",
                "id=pro_monthly&amount=999&currency=eur&interval=month&interval_count=1&product[name]=Kakin%20Pro",
                "cancel_at_period_end=true",
                nil,
                nil,
            ])
        #expect(
            requests.map(\.url.absoluteString) == [
                "https://stripe.example/v1/payment_intents",
                "https://stripe.example/v1/subscriptions",
                "https://stripe.example/v1/refunds",
                "https://stripe.example/v1/plans",
                "https://stripe.example/v1/subscriptions/sub_1",
                "https://stripe.example/v1/invoices/in_1?expand%5B%5D=subscription&expand%5B%5D=payment_intent",
                "https://stripe.example/v1/events?type=invoice.paid&created%5Bgt%5D=1700000000&created%5Bgte%5D=1699999000&starting_after=evt_9&limit=50",
            ])
    }

    @Test func anIdInAPathIsPercentEncoded() async throws {
        let exchange = StripeRecordingExchange(fallback: StripeShapes.answer)
        _ = try await client(exchange, made: Made()).retrieveCustomer("cus_1/../x")
        #expect(
            await exchange.requests.first?.url.absoluteString == "https://stripe.example/v1/customers/cus_1%2F..%2Fx")
    }

    @Test func aRetryOfACallSendsItsKeyAgain() async throws {
        let exchange = StripeRecordingExchange(
            [.answer(StripeShapes.error(500, type: "api_error")), .noAnswer], fallback: StripeShapes.answer)
        let made = Made()
        let client = client(exchange, made: made)
        let refund = try await client.createRefund(of: .paymentIntent("pi_1"))
        #expect(refund.id == "re_1")
        _ = try await client.createRefund(of: .paymentIntent("pi_1"), idempotencyKey: "kakin-refund-r2")
        let keys = await exchange.requests.map { $0.headers["Idempotency-Key"] }
        #expect(keys == ["key-1", "key-1", "key-1", "kakin-refund-r2"])
        #expect(made.allWaits == [.milliseconds(500), .seconds(1)])
    }

    @Test func aCallersKeyIsSentAgainOnEachRetry() async throws {
        let exchange = StripeRecordingExchange(
            [.answer(StripeShapes.error(429, type: "invalid_request_error", code: "rate_limit"))],
            fallback: StripeShapes.answer)
        _ = try await client(exchange, made: Made()).createCustomer(idempotencyKey: "kakin-customer-c9")
        let keys = await exchange.requests.map { $0.headers["Idempotency-Key"] }
        #expect(keys == ["kakin-customer-c9", "kakin-customer-c9"])
    }

    @Test func retryingStopsAfterTheAttemptsAndThrowsTheLastFailure() async throws {
        let exchange = StripeRecordingExchange(
            [
                .answer(StripeShapes.error(503, type: "api_error")),
                .answer(StripeShapes.error(503, type: "api_error")),
                .answer(StripeShapes.error(429, type: "invalid_request_error", code: "rate_limit")),
            ], fallback: StripeShapes.answer)
        let made = Made()
        let error = await #expect(throws: StripeError.self) {
            try await client(exchange, made: made).retrieveCustomer("cus_1")
        }
        #expect(error?.kind == .rateLimit)
        #expect(error?.status == 429)
        #expect(error?.code == "rate_limit")
        #expect(error?.isRetryable == true)
        #expect(await exchange.requests.count == 3)
        #expect(made.allWaits == [.milliseconds(500), .seconds(1)])
    }

    @Test(arguments: [
        (StripeShapes.error(429, type: "invalid_request_error"), StripeError.Kind.rateLimit, true),
        (StripeShapes.error(500, type: "api_error"), .api, true),
        (StripeShapes.error(502, type: "api_error", headers: ["stripe-should-retry": "false"]), .api, false),
        (
            StripeShapes.error(409, type: "idempotency_error", headers: ["stripe-should-retry": "true"]), .idempotency,
            true
        ),
        (StripeShapes.error(409, type: "idempotency_error"), .idempotency, false),
        (StripeShapes.error(400, type: "invalid_request_error", code: "parameter_missing"), .invalidRequest, false),
        (StripeShapes.error(401, type: "invalid_request_error"), .authentication, false),
        (StripeShapes.error(403, type: "invalid_request_error"), .permission, false),
        (StripeShapes.error(404, type: "invalid_request_error", code: "resource_missing"), .notFound, false),
        (HTTPAnswer(status: 502, body: Data("<html>Bad gateway</html>".utf8)), .api, true),
    ])
    func aRefusalIsTypedAndSaysWhetherToRetry(answer: HTTPAnswer, kind: StripeError.Kind, retryable: Bool) async throws
    {
        let exchange = StripeRecordingExchange([.answer(answer)], fallback: StripeShapes.answer)
        let error = await #expect(throws: StripeError.self) {
            try await client(exchange, made: Made(), attempts: 1).retrieveCustomer("cus_1")
        }
        #expect(error?.kind == kind)
        #expect(error?.status == answer.status)
        #expect(error?.isRetryable == retryable)
    }

    @Test func aRefusalThatMustNotBeRetriedIsSentOnce() async throws {
        let exchange = StripeRecordingExchange(
            [.answer(StripeShapes.error(500, type: "api_error", headers: ["stripe-should-retry": "false"]))],
            fallback: StripeShapes.answer)
        let made = Made()
        await #expect(throws: StripeError.self) { try await client(exchange, made: made).retrievePaymentIntent("pi_1") }
        #expect(await exchange.requests.count == 1)
        #expect(made.allWaits.isEmpty)
    }

    @Test func aCardErrorKeepsEachPartOfStripesBody() async throws {
        let body = #"""
            {"error":{"type":"card_error","code":"card_declined","decline_code":"insufficient_funds",
            "message":"Your card has insufficient funds.","param":"payment_method","charge":"ch_1",
            "doc_url":"https://stripe.com/docs/error-codes/card-declined"}}
            """#
        let exchange = StripeRecordingExchange(
            [.answer(HTTPAnswer(status: 402, body: Data(body.utf8), headers: ["request-id": "req_9"]))],
            fallback: StripeShapes.answer)
        let error = await #expect(throws: StripeError.self) {
            try await client(exchange, made: Made()).createPaymentIntent(amount: 100, currency: "eur", confirm: true)
        }
        #expect(
            error
                == StripeError(
                    kind: .card, status: 402, type: "card_error", code: "card_declined",
                    declineCode: "insufficient_funds", param: "payment_method",
                    message: "Your card has insufficient funds.", requestID: "req_9", isRetryable: false))
        #expect(await exchange.requests.count == 1)
    }

    @Test func noAnswerIsRetryable() async throws {
        let exchange = StripeRecordingExchange([.noAnswer], fallback: StripeShapes.answer)
        let error = await #expect(throws: StripeError.self) {
            try await client(exchange, made: Made(), attempts: 1).retrieveCustomer("cus_1")
        }
        #expect(error?.kind == .noAnswer)
        #expect(error?.status == nil)
        #expect(error?.isRetryable == true)
    }

    @Test func aSuccessfulAnswerThatIsNotTheObjectIsATypedErrorAndIsNotRetried() async throws {
        let exchange = StripeRecordingExchange(
            [.answer(HTTPAnswer(status: 200, body: Data(#"{"id":"cus_1","object":"customer"}"#.utf8)))],
            fallback: StripeShapes.answer)
        let error = await #expect(throws: StripeError.self) {
            try await client(exchange, made: Made()).retrieveCustomer("cus_1")
        }
        #expect(error?.kind == .unreadableAnswer)
        #expect(error?.status == 200)
        #expect(error?.isRetryable == false)
        #expect(await exchange.requests.count == 1)
    }
}
