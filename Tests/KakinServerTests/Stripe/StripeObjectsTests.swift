import Foundation
import Testing

@testable import KakinServer

@Suite("Stripe: reading Stripe's objects")
struct StripeObjectsTests {
    func decode<Object: Decodable>(_ type: Object.Type, _ json: String) throws -> Object {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(Object.self, from: Data(json.utf8))
    }

    @Test func expandedFieldsOfAnInvoiceAreReadAsTheirIds() throws {
        let json = #"""
            {"id":"in_1","object":"invoice","customer":{"id":"cus_1","object":"customer","email":"a@example.com"},
             "subscription":{"id":"sub_1","object":"subscription","status":"active","items":{"data":[]}},
             "payment_intent":{"id":"pi_1","object":"payment_intent","amount":999,"latest_charge":"ch_1"},
             "charge":{"id":"ch_1","object":"charge","amount":999,"refunds":{"data":[],"has_more":false}},
             "status":"paid","amount_due":999,"amount_paid":999,"amount_remaining":0,"currency":"eur",
             "billing_reason":"subscription_cycle","period_start":1700000000,"period_end":1702592000,
             "lines":{"object":"list","data":[{"id":"il_1","object":"line_item","amount":999,
               "plan":{"id":"plan_1","object":"plan","amount":999},"price":{"id":"plan_1","object":"price"},
               "period":{"start":1702592000,"end":1705270400}}],"has_more":false,"total_count":1},
             "metadata":{"kakin_customer":"c1"},"created":1700000100,"livemode":false,"next_payment_attempt":null}
            """#
        let invoice = try decode(StripeInvoice.self, json)
        #expect(invoice.customer == "cus_1")
        #expect(invoice.subscription == "sub_1")
        #expect(invoice.paymentIntent == "pi_1")
        #expect(invoice.charge == "ch_1")
        #expect(invoice.status == .paid)
        #expect(invoice.amountPaid == 999)
        #expect(invoice.billingReason == "subscription_cycle")
        #expect(invoice.periodEnd == Date(timeIntervalSince1970: 1_702_592_000))
        #expect(invoice.lines.map(\.plan) == ["plan_1"])
        #expect(invoice.lines.first?.periodEnd == Date(timeIntervalSince1970: 1_705_270_400))
        #expect(invoice.metadata == ["kakin_customer": "c1"])
    }

    @Test func nullableFieldsOfAnInvoiceMayBeNull() throws {
        let json = #"""
            {"id":"in_2","customer":"cus_1","subscription":null,"payment_intent":null,"charge":null,"status":null,
             "amount_due":0,"amount_paid":0,"currency":"usd","billing_reason":null,"period_start":null,
             "period_end":null,"lines":null,"metadata":null,"created":1700000000}
            """#
        let invoice = try decode(StripeInvoice.self, json)
        #expect(invoice.subscription == nil)
        #expect(invoice.paymentIntent == nil)
        #expect(invoice.charge == nil)
        #expect(invoice.status == nil)
        #expect(invoice.lines.isEmpty)
        #expect(invoice.metadata.isEmpty)
    }

    @Test func aPaymentIntentsChargeIsItsLatestChargeOrTheFirstOfItsCharges() throws {
        let expanded = try decode(
            StripePaymentIntent.self,
            #"{"id":"pi_1","status":"succeeded","amount":5,"currency":"eur","created":1,"latest_charge":{"id":"ch_9","object":"charge"},"customer":{"id":"cus_1"}}"#
        )
        #expect(expanded.latestCharge == "ch_9")
        #expect(expanded.customer == "cus_1")
        let older = try decode(
            StripePaymentIntent.self,
            #"{"id":"pi_1","status":"succeeded","amount":5,"currency":"eur","created":1,"charges":{"object":"list","data":[{"id":"ch_3"}],"has_more":false}}"#
        )
        #expect(older.latestCharge == "ch_3")
        let unpaid = try decode(
            StripePaymentIntent.self,
            #"{"id":"pi_1","status":"requires_payment_method","amount":5,"currency":"eur","created":1,"latest_charge":null,"last_payment_error":{"code":"card_declined","decline_code":"generic_decline","message":"Declined"}}"#
        )
        #expect(unpaid.latestCharge == nil)
        #expect(unpaid.status == .requiresPaymentMethod)
        #expect(unpaid.lastPaymentError?.declineCode == "generic_decline")
    }

    @Test func aStatusStripeAddsLaterIsKept() throws {
        let json = #"""
            {"id":"sub_1","customer":{"id":"cus_1","object":"customer"},"status":"some_future_status",
             "cancel_at_period_end":true,"trial_end":1700604800,"current_period_end":null,
             "latest_invoice":{"id":"in_1","object":"invoice"},
             "items":{"object":"list","data":[{"id":"si_1","plan":"plan_1","quantity":2}],"has_more":false},
             "metadata":{},"created":1700000000}
            """#
        let subscription = try decode(StripeSubscription.self, json)
        #expect(subscription.status.rawValue == "some_future_status")
        #expect(subscription.customer == "cus_1")
        #expect(subscription.latestInvoice == "in_1")
        #expect(subscription.cancelAtPeriodEnd)
        #expect(subscription.trialEnd == Date(timeIntervalSince1970: 1_700_604_800))
        #expect(subscription.currentPeriodEnd == nil)
        #expect(subscription.items.map(\.plan) == ["plan_1"])
    }

    @Test func aRefundsExpandedPaymentIntentAndChargeAreReadAsIds() throws {
        let refund = try decode(
            StripeRefund.self,
            #"{"id":"re_1","status":null,"amount":500,"currency":"eur","payment_intent":{"id":"pi_1"},"charge":{"id":"ch_1","object":"charge"},"metadata":{"kakin_refund":"r1"},"created":1}"#
        )
        #expect(refund.paymentIntent == "pi_1")
        #expect(refund.charge == "ch_1")
        #expect(refund.status == nil)
        #expect(refund.metadata == ["kakin_refund": "r1"])
    }

    @Test func anExpandableFieldThatIsNeitherAnIdNorAnObjectIsRefused() {
        #expect(throws: DecodingError.self) {
            try decode(
                StripeRefund.self,
                #"{"id":"re_1","amount":500,"currency":"eur","payment_intent":42,"created":1}"#)
        }
    }
}
