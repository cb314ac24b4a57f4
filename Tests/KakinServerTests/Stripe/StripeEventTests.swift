import AppStoreModels
import Foundation
import Testing

@testable import KakinServer

@Suite("Stripe webhooks: events")
struct StripeEventTests {
    /// An `invoice.paid` event in the shape Stripe documents for API version 2024-06-20 (trimmed).
    static let invoicePaid = Data(
        #"""
        {
          "id": "evt_1QabcDEF",
          "object": "event",
          "api_version": "2024-06-20",
          "created": 1795000000,
          "data": {
            "object": {
              "id": "in_1QabcDEF",
              "object": "invoice",
              "amount_paid": 999,
              "billing_reason": "subscription_cycle",
              "currency": "usd",
              "customer": "cus_Q1",
              "subscription": "sub_Q1",
              "status": "paid",
              "lines": {"object": "list", "data": [], "has_more": false}
            }
          },
          "livemode": false,
          "pending_webhooks": 1,
          "request": {"id": null, "idempotency_key": null},
          "type": "invoice.paid"
        }
        """#.utf8)

    @Test func anEventIsReadWithItsObjectKeptWhole() throws {
        let event = try StripeEvent(json: Self.invoicePaid)
        #expect(event.id == "evt_1QabcDEF")
        #expect(event.type == "invoice.paid")
        #expect(event.created == Date(timeIntervalSince1970: 1_795_000_000))
        #expect(event.apiVersion == "2024-06-20")
        #expect(!event.livemode)
        #expect(event.objectType == "invoice")
        #expect(event.objectID == "in_1QabcDEF")
        #expect(event.object["amount_paid"]?.integerValue == 999)
        #expect(event.previousAttributes == nil)

        struct Paid: Decodable {
            var subscription: String
            var amount_paid: Int
        }
        let paid = try event.object(as: Paid.self)
        #expect(paid.subscription == "sub_Q1")
        #expect(paid.amount_paid == 999)
    }

    @Test func anEventWrittenAsJSONReadsBackTheSame() throws {
        let event = try StripeEvent(json: Self.invoicePaid)
        #expect(try StripeEvent(json: event.json) == event)
        let text = String(decoding: event.json, as: UTF8.self)
        #expect(text.hasPrefix(#"{"api_version":"2024-06-20","created":1795000000,"data":{"object":{"#))
        #expect(text.contains(#""object":"event""#))
    }

    @Test func anUpdateKeepsThePreviousAttributes() throws {
        let json = Data(
            #"""
            {"id": "evt_2", "object": "event", "created": 1795000100, "type": "customer.subscription.updated",
             "data": {"object": {"id": "sub_Q1", "object": "subscription", "status": "past_due"},
                      "previous_attributes": {"status": "active"}}}
            """#.utf8)
        let event = try StripeEvent(json: json)
        #expect(event.objectType == "subscription")
        #expect(event.previousAttributes?["status"]?.stringValue == "active")
        #expect(event.apiVersion == nil)
    }

    @Test func aBodyThatIsNotAnEventIsRefusedWithWhy() {
        let cases: [(String, String)] = [
            ("not json", "not valid JSON"),
            (#"{"id": "in_1", "object": "invoice", "created": 1, "type": "x", "data": {"object": {}}}"#, "not an event but a invoice"),
            (#"{"object": "event", "created": 1, "type": "x", "data": {"object": {}}}"#, "no id"),
            (#"{"id": "evt_3", "created": 1, "type": "x"}"#, "no data"),
            (#"{"id": "evt_3", "created": "soon", "type": "x", "data": {"object": {}}}"#, "created"),
            (#"{"id": "evt_3", "created": 1, "type": "x", "data": {"object": [1]}}"#, "an event needs an id, a type and an object"),
            (#"{"id": "", "created": 1, "type": "x", "data": {"object": {}}}"#, "an event needs an id, a type and an object"),
        ]
        for (json, reason) in cases {
            do {
                _ = try StripeEvent(json: Data(json.utf8))
                Issue.record("accepted \(json)")
            } catch {
                #expect(error.reason.contains(reason), "\(json): \(error.reason)")
            }
        }
    }
}
