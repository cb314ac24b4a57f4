import Foundation
import KakinLedger
import KakinTestSupport
import Testing

@testable import KakinServer

@Suite(
    "Stripe events: what no webhook brought, recorded from Stripe's list of events",
    .enabled(if: StripeEmulator.available, StripeEmulator.skipMessage))
struct StripeEventReconciliationTests {
    @Test func eventsNoWebhookBroughtAreRecordedOnceFromTheCheckpointOn() async throws {
        let emulator = try #require(StripeEmulator.url)
        let store = try SQLiteLedger(path: nil)
        try await store.migrate()
        let bundleID = ServerFixture.bundleID
        let service = PurchaseService.example(store: store, root: ServerFixture.authority.root, configure: { app in
            app.stripe = StripeAccount(
                secretKey: StripeEmulator.secretKey, webhookSecrets: ["whsec_0123456789"], apiBase: emulator)
        })
        let client = StripeClient(secretKey: StripeEmulator.secretKey, baseURL: emulator)
        func created(_ customer: String) async throws -> [StripeEventRecord] {
            try await store.stripeEventsToApply(bundleID: bundleID, limit: 100_000)
                .filter { $0.objectID == customer && $0.type == "customer.created" }
        }

        #expect(try await store.newestStripeEvent(bundleID: bundleID) == nil)
        let first = try await client.createCustomer(email: "reconciled-1@example.com")
        let before = try await service.reconcileStripeEvents(bundleID: bundleID)
        #expect(before.recorded >= 1)
        #expect(before.listed >= before.recorded)
        let recorded = try #require(try await created(first.id).first)
        #expect(try await created(first.id).count == 1)
        // The payload is the event as listed, whole.
        let event = try StripeEvent(json: Data(recorded.payload.utf8))
        #expect(event.id == recorded.eventID)
        #expect(event.object["email"]?.stringValue == "reconciled-1@example.com")
        #expect(recorded.createdAt == event.created)
        let checkpoint = try #require(try await store.newestStripeEvent(bundleID: bundleID))
        #expect(checkpoint >= first.created)

        // The next run lists from the checkpoint's second on: the new customer's event is recorded,
        // the first one's is not recorded again.
        let second = try await client.createCustomer(email: "reconciled-2@example.com")
        let after = try await service.reconcileStripeEvents(bundleID: bundleID)
        #expect(after.recorded >= 1)
        #expect(after.listed < before.listed + after.recorded + 50, "listed from the checkpoint, not from the start")
        #expect(try await created(second.id).count == 1)
        #expect(try await created(first.id).count == 1)
        try await store.shutdown()
    }

    @Test func anAppWithoutAStripeAccountOrAStripeThatDoesNotAnswerIsATypedError() async throws {
        let emulator = try #require(StripeEmulator.url)
        let store = try SQLiteLedger(path: nil)
        try await store.migrate()
        let without = PurchaseService.example(store: store, root: ServerFixture.authority.root)
        await #expect(throws: ServerError(.notConfigured, "")) {
            try await without.reconcileStripeEvents(bundleID: ServerFixture.bundleID)
        }
        await #expect(throws: ServerError(.unknownApp, "")) {
            try await without.reconcileStripeEvents(bundleID: "com.example.other")
        }
        let refused = PurchaseService.example(store: store, root: ServerFixture.authority.root, configure: { app in
            app.stripe = StripeAccount(
                secretKey: "sk_test_0123456789", webhookSecrets: ["whsec_0123456789"],
                apiBase: emulator.appendingPathComponent("nowhere"))
        })
        do {
            _ = try await refused.reconcileStripeEvents(bundleID: ServerFixture.bundleID)
            Issue.record("a Stripe that answers 404 was taken for a list of events")
        } catch let error as ServerError {
            #expect(error.code == .appleUnavailable)
            #expect(error.cause == "stripeUnavailable")
        }
        #expect(try await store.newestStripeEvent(bundleID: ServerFixture.bundleID) == nil)
        try await store.shutdown()
    }
}
