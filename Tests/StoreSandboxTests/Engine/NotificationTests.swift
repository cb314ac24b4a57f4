import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinTestSupport
import StoreSandbox
import Testing

@Suite struct NotificationTests {
    @Test func everyEventBecomesAVerifiableNotification() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "n@example.com")
        let bought = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthly")).transaction)
        fixture.days(8)
        try await fixture.engine.processRenewals()
        try await fixture.engine.refund(bought.id)
        let verifier = try fixture.engine.signer.makeVerifier()
        let events = await fixture.engine.events()
        #expect(events.map(\.notificationType) == [.subscribed, .didRenew, .refund])
        for event in events {
            let body = try await fixture.engine.signedNotification(for: event)
            let notification = try await verifier.verifyNotification(try #require(body.signedPayload))
            #expect(notification.notificationType == event.notificationType)
            #expect(notification.subtype == event.subtype)
            #expect(notification.data?.bundleID == ExampleApp.bundleID)
            #expect(notification.data?.appAppleID == ExampleApp.appAppleID)
            let transaction = try await verifier.verifyTransaction(try #require(notification.data?.signedTransactionInfo))
            #expect(transaction.transactionID == event.transactionID)
            let renewal = try await verifier.verifyRenewalInfo(try #require(notification.data?.signedRenewalInfo))
            #expect(renewal.originalTransactionID == bought.id)
            #expect(notification.data?.status != nil)
        }
        #expect(events.first?.subtype == .initialBuy)
    }

    @Test func oneTimeChargeHasNoRenewalInfo() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "n@example.com")
        _ = try await fixture.engine.purchase(.init(testerID: tester.id, productID: "points"))
        let event = try #require(await fixture.engine.events().first)
        let payload = try await fixture.engine.notificationPayload(for: event)
        #expect(payload.notificationType == .oneTimeCharge)
        #expect(payload.data?.signedRenewalInfo == nil)
        #expect(payload.data?.signedTransactionInfo != nil)
        #expect(try await fixture.engine.takeEvents().count == 1)
        #expect(await fixture.engine.events().isEmpty)
    }
}
