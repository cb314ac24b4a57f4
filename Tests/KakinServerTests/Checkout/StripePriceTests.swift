import Foundation
import Synchronization
import Testing

@testable import KakinServer

@Suite("Stripe: prices")
struct StripePriceTests {
    @Test func aPriceIsReadFromStripesObject() throws {
        let once = try StripeClient.decoder.decode(
            StripePrice.self, from: StripePriceFixture.json(id: "price_1", amount: 999, currency: "usd", interval: nil))
        #expect(once == StripePrice(id: "price_1", unitAmount: 999, currency: "usd", recurring: nil, product: "prod_QXgBRqzTbNC2Ja", active: true))
        let monthly = try StripeClient.decoder.decode(
            StripePrice.self, from: StripePriceFixture.json(id: "price_2", amount: 499, currency: "eur", interval: "month"))
        #expect(monthly.recurring == .init(interval: "month", intervalCount: 1))
    }

    @Test func aPlanIsReadWhenStripeKnowsNoPriceOfThatID() async throws {
        let plan = Data(
            #"{"id": "plan_q", "object": "plan", "amount": 1500, "currency": "usd", "interval": "month", "interval_count": 3, "product": "prod_1", "active": true, "metadata": {}}"#
                .utf8)
        let stub = PlanStub(plan: plan)
        var client = StripeClient(secretKey: "sk_test_x", exchange: stub)
        client.attempts = 1
        let price = try await client.retrievePrice("plan_q")
        #expect(price.unitAmount == 1500)
        #expect(price.recurring == .init(interval: "month", intervalCount: 3))
        #expect(stub.paths == ["/v1/prices/plan_q", "/v1/plans/plan_q"])
    }
}

/// Knows no price, and one plan.
private final class PlanStub: HTTPExchange {
    let plan: Data
    private let sent = Mutex<[String]>([])
    init(plan: Data) { self.plan = plan }
    var paths: [String] { sent.withLock { $0 } }

    func send(method: String, url: URL, headers: [String: String], body: Data?) async throws -> (status: Int, body: Data) {
        let answer = try await answer(method: method, url: url, headers: headers, body: body)
        return (answer.status, answer.body)
    }

    func answer(method: String, url: URL, headers: [String: String], body: Data?) async throws -> HTTPAnswer {
        sent.withLock { $0.append(url.path) }
        if url.path.hasPrefix("/v1/plans/") { return HTTPAnswer(status: 200, body: plan, headers: [:]) }
        return HTTPAnswer(
            status: 404,
            body: Data(#"{"error": {"type": "invalid_request_error", "code": "resource_missing", "message": "No such price"}}"#.utf8),
            headers: [:])
    }
}
