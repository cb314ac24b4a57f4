import Foundation
import KakinTestSupport
import Testing

@testable import KakinServer

/// The client against localstripe, the Stripe emulator `scripts/localstripe` starts.
///
/// The emulator keeps one store for the whole run and these tests run side by side, so each test
/// makes its own customers and plans and looks only at those. The emulator's clock decides
/// every time here: a trial's end is counted from the time the emulator gave a customer.
@Suite(
    "Stripe: the client against the Stripe emulator", .enabled(if: StripeEmulator.available, StripeEmulator.skipMessage)
)
struct StripeClientTests {
    /// A client of the emulator that sends each call once (the emulator never asks for a retry).
    func client(secretKey: String = StripeEmulator.secretKey) throws -> StripeClient {
        var client = StripeClient(secretKey: secretKey, baseURL: try #require(StripeEmulator.url))
        client.attempts = 1
        return client
    }

    /// A new plan of 9.99 € a month, with an id of its own.
    func monthlyPlan(_ client: StripeClient) async throws -> StripePlan {
        try await client.createPlan(
            id: "kakin_pro_" + UUID().uuidString.prefix(8).lowercased(), amount: 999, currency: "eur",
            interval: "month", productName: "Kakin Pro")
    }

    /// A new customer whose default payment method is a card that pays.
    func payingCustomer(_ client: StripeClient) async throws -> StripeCustomer {
        let card = try await client.createCardPaymentMethod(
            number: "4242424242424242", expMonth: 12, expYear: 2034, cvc: "123")
        return try await client.createCustomer(
            email: "payer@example.com", metadata: ["kakin_customer": UUID().uuidString], paymentMethod: card.id)
    }

    @Test func aCustomerIsCreatedAndReadBack() async throws {
        let client = try client()
        let email = "kakin-\(UUID().uuidString)@example.com"
        let created = try await client.createCustomer(email: email, metadata: ["kakin_customer": "c 1&2"])
        let read = try await client.retrieveCustomer(created.id)
        #expect(read == created)
        #expect(read.id.hasPrefix("cus_"))
        #expect(read.email == email)
        #expect(read.metadata == ["kakin_customer": "c 1&2"])
    }

    @Test func aCustomerCreatedWithACardHasItAsItsDefault() async throws {
        let client = try client()
        let customer = try await payingCustomer(client)
        let card = try #require(customer.defaultPaymentMethod)
        #expect(card.hasPrefix("pm_"))
    }

    @Test func anUnknownCustomerIsNotFound() async throws {
        let error = await #expect(throws: StripeError.self) { try await client().retrieveCustomer("cus_nobody") }
        #expect(error?.kind == .notFound)
        #expect(error?.status == 404)
    }

    @Test func aConfirmedPaymentWithATestCardSucceeds() async throws {
        let client = try client()
        let intent = try await client.createPaymentIntent(
            amount: 2000, currency: "eur", paymentMethod: "pm_card_visa", confirm: true,
            metadata: ["kakin_purchase": "p1"])
        #expect(intent.status == .succeeded)
        #expect(intent.amount == 2000)
        #expect(intent.currency == "eur")
        #expect(intent.metadata == ["kakin_purchase": "p1"])
        let charge = try #require(intent.latestCharge)
        #expect(charge.hasPrefix("ch_"))
        let read = try await client.retrievePaymentIntent(intent.id)
        #expect(read.status == .succeeded)
        #expect(read.latestCharge == charge)
    }

    @Test func aPaymentIntentIsConfirmedAfterItIsCreated() async throws {
        let client = try client()
        let customer = try await payingCustomer(client)
        let intent = try await client.createPaymentIntent(
            amount: 1500, currency: "eur", customer: customer.id, paymentMethod: customer.defaultPaymentMethod)
        #expect(intent.status == .requiresConfirmation)
        #expect(intent.customer == customer.id)
        #expect(intent.latestCharge == nil)
        let confirmed = try await client.confirmPaymentIntent(intent.id)
        #expect(confirmed.status == .succeeded)
        #expect(confirmed.latestCharge != nil)
    }

    @Test func aDeclinedCardIsATypedCardError() async throws {
        let client = try client()
        // Stripe's test card that attaches but whose charges are declined (4000000000000341).
        let error = await #expect(throws: StripeError.self) {
            try await client.createPaymentIntent(
                amount: 2000, currency: "eur", paymentMethod: "pm_card_chargeCustomerFail", confirm: true)
        }
        #expect(error?.kind == .card)
        #expect(error?.status == 402)
        #expect(error?.code == "card_declined")
        #expect(error?.isRetryable == false)
    }

    @Test func aCardDeclinedWhenAttachedIsATypedCardError() async throws {
        let client = try client()
        let customer = try await client.createCustomer(email: "declined@example.com")
        let card = try await client.createCardPaymentMethod(
            number: "4000000000000002", expMonth: 12, expYear: 2034, cvc: "123")
        #expect(card.cardLast4 == "0002")
        let error = await #expect(throws: StripeError.self) {
            try await client.attachPaymentMethod(card.id, to: customer.id)
        }
        #expect(error?.kind == .card)
        #expect(error?.code == "card_declined")
    }

    @Test func aCardIsAttachedToACustomer() async throws {
        let client = try client()
        let customer = try await client.createCustomer(email: "attach@example.com")
        let card = try await client.createCardPaymentMethod(
            number: "4242424242424242", expMonth: 1, expYear: 2035, cvc: "321")
        #expect(card.customer == nil)
        let attached = try await client.attachPaymentMethod(card.id, to: customer.id)
        #expect(attached.id == card.id)
        #expect(attached.customer == customer.id)
    }

    @Test func aTrialSubscriptionIsCanceledAtItsPeriodsEndThenNow() async throws {
        let client = try client()
        let plan = try await monthlyPlan(client)
        let customer = try await payingCustomer(client)
        let trialEnd = customer.created.addingTimeInterval(7 * 86_400)
        let subscription = try await client.createSubscription(
            customer: customer.id, plan: plan.id, trialEnd: trialEnd, metadata: ["kakin_customer": "c1"])
        #expect(subscription.customer == customer.id)
        #expect(subscription.trialEnd == trialEnd)
        #expect(subscription.items.map(\.plan) == [plan.id])
        #expect(subscription.metadata == ["kakin_customer": "c1"])
        #expect(subscription.latestInvoice == nil, "a trial is not invoiced")
        #expect(!subscription.cancelAtPeriodEnd)
        withKnownIssue("localstripe 1.15.10 leaves a subscription in trial 'incomplete' where Stripe says 'trialing'") {
            #expect(subscription.status == .trialing)
        }

        let ending = try await client.cancelSubscriptionAtPeriodEnd(subscription.id)
        #expect(ending.cancelAtPeriodEnd)
        #expect(ending.status == subscription.status)
        #expect(try await client.retrieveSubscription(subscription.id).cancelAtPeriodEnd)

        let canceled = try await client.cancelSubscription(subscription.id)
        #expect(canceled.status == .canceled)
        #expect(canceled.endedAt != nil)
        #expect(try await client.retrieveSubscription(subscription.id).status == .canceled)
    }

    @Test func aSubscriptionWithoutATrialIsInvoicedAndPaid() async throws {
        let client = try client()
        let plan = try await monthlyPlan(client)
        #expect(plan.amount == 999)
        #expect(plan.interval == "month")
        #expect(plan.product?.hasPrefix("prod_") == true)
        let customer = try await payingCustomer(client)
        let subscription = try await client.createSubscription(customer: customer.id, plan: plan.id)
        #expect(subscription.status == .active)
        let invoiceID = try #require(subscription.latestInvoice)

        let invoice = try await client.retrieveInvoice(invoiceID)
        #expect(invoice.status == .paid)
        #expect(invoice.customer == customer.id)
        #expect(invoice.subscription == subscription.id)
        #expect(invoice.amountPaid == 999)
        #expect(invoice.currency == "eur")
        #expect(invoice.lines.map(\.plan) == [plan.id])
        #expect(invoice.periodEnd == subscription.currentPeriodEnd)
        let intentID = try #require(invoice.paymentIntent)
        let intent = try await client.retrievePaymentIntent(intentID)
        #expect(intent.status == .succeeded)
        #expect(invoice.charge != nil)
        #expect(invoice.charge == intent.latestCharge)

        let expanded = try await client.retrieveInvoice(invoiceID, expand: ["subscription", "customer"])
        #expect(expanded == invoice)
    }

    @Test func aPaidPaymentIsPartlyRefunded() async throws {
        let client = try client()
        let intent = try await client.createPaymentIntent(
            amount: 2000, currency: "eur", paymentMethod: "pm_card_visa", confirm: true)
        let refund = try await client.createRefund(
            of: .paymentIntent(intent.id), amount: 500, metadata: ["kakin_refund": "r1"])
        #expect(refund.id.hasPrefix("re_"))
        #expect(refund.status == .succeeded)
        #expect(refund.amount == 500)
        #expect(refund.currency == "eur")
        #expect(refund.paymentIntent == intent.id)
        #expect(refund.charge == intent.latestCharge)
        #expect(refund.metadata == ["kakin_refund": "r1"])
    }

    @Test func aChargeIsRefundedInFull() async throws {
        let client = try client()
        let intent = try await client.createPaymentIntent(
            amount: 1200, currency: "eur", paymentMethod: "pm_card_visa", confirm: true)
        let refund = try await client.createRefund(of: .charge(try #require(intent.latestCharge)))
        #expect(refund.amount == 1200)
        #expect(refund.charge == intent.latestCharge)
    }

    @Test func eventsAreFilteredByTypeAndTimeAndPaged() async throws {
        let client = try client()
        let first = try await client.createCustomer(email: "events-1@example.com")
        let second = try await client.createCustomer(email: "events-2@example.com")
        let since = first.created.addingTimeInterval(-1)

        var seen: [StripeEvent] = []
        var pages = 0
        var query = StripeEventQuery(type: "customer.created", createdAfter: since, limit: 1)
        while pages < 500 {
            let page = try await client.listEvents(query)
            pages += 1
            #expect(page.data.count <= 1)
            seen += page.data
            guard page.hasMore, let last = page.data.last else { break }
            query.startingAfter = last.id
        }
        #expect(pages >= 2)
        #expect(Set(seen.map(\.id)).count == seen.count, "no event is on two pages")
        #expect(seen.allSatisfy { $0.type == "customer.created" })
        #expect(seen.allSatisfy { $0.created > since })
        let objects = Set(seen.compactMap(\.objectID))
        #expect(objects.isSuperset(of: [first.id, second.id]))

        let later = try await client.listEvents(
            StripeEventQuery(type: "customer.created", createdAfter: second.created.addingTimeInterval(3_600)))
        #expect(later.data.isEmpty)
        #expect(!later.hasMore)
        let otherType = try await client.listEvents(StripeEventQuery(type: "plan.created", createdAfter: since))
        #expect(!otherType.data.contains { [first.id, second.id].contains($0.objectID) })
    }

    @Test func aKeyThatIsNotASecretKeyIsATypedAuthenticationError() async throws {
        let error = await #expect(throws: StripeError.self) {
            try await client(secretKey: "pk_test_kakin").retrieveCustomer("cus_any")
        }
        #expect(error?.kind == .authentication)
        #expect(error?.status == 401)
        #expect(error?.isRetryable == false)
    }
}
