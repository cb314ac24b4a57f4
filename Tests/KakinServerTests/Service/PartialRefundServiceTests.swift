import AppStoreModels
import Foundation
import KakinServer
import KakinLedger
import KakinTestSupport
import StoreSandbox
import Testing

@Suite struct PartialRefundServiceTests {
    @Test func aProratedRefundNotificationTakesBackItsShareOnce() async throws {
        let fixture = try await ServerFixture()
        let (transaction, jws) = try await fixture.buy("increasePoints")
        _ = try await fixture.service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-1")

        try await fixture.engine.refund(transaction.id, percentage: 50_000)
        let half = try #require(await fixture.engine.events().last)
        let halfBody = try await fixture.engine.signedNotification(for: half)
        #expect(try await fixture.service.receiveNotification(halfBody) == .processed(.refund))
        #expect(try await fixture.service.receiveNotification(halfBody) == .duplicate)
        // The app uploads the refunded transaction too: nothing more is taken.
        let refunded = try fixture.engine.signer.signTransaction(
            try await fixture.engine.transaction(transaction.id), at: fixture.clock.now())
        _ = try await fixture.service.submitTransaction(refunded, bundleID: ServerFixture.bundleID, appUserID: "user-1")
        var customer = try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: "user-1")
        #expect(customer.balances["points"] == 50)
        #expect(customer.ledger.map(\.amount) == [100, -50])

        fixture.clock.advance(by: 86_400)
        try await fixture.engine.refund(transaction.id)
        let full = try #require(await fixture.engine.events().last)
        #expect(
            try await fixture.service.receiveNotification(try await fixture.engine.signedNotification(for: full))
                == .processed(.refund))
        customer = try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: "user-1")
        #expect(customer.balances["points"] == 0)
        #expect(customer.ledger.map(\.amount) == [100, -50, -50])
        try await fixture.store.shutdown()
    }

    @Test func aProratedRefundOfANonConsumableEndsItsEntitlement() async throws {
        let fixture = try await ServerFixture()
        let (transaction, jws) = try await fixture.buy("unlock")
        _ = try await fixture.service.submitTransaction(jws, bundleID: ServerFixture.bundleID, appUserID: "user-2")
        #expect(
            try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: "user-2").entitlements
                .map(\.identifier) == ["unlock"])
        try await fixture.engine.refund(transaction.id, percentage: 30_000)
        let event = try #require(await fixture.engine.events().last)
        _ = try await fixture.service.receiveNotification(try await fixture.engine.signedNotification(for: event))
        let customer = try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: "user-2")
        #expect(customer.entitlements.filter { $0.isActive }.isEmpty)
        try await fixture.store.shutdown()
    }
}
