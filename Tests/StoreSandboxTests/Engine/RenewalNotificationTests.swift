import AppStoreModels
import AppStoreSecurity
import Foundation
import StoreSandbox
import Testing

/// Each subscription state the sandbox simulates (auto-renewal off, billing failure in a grace
/// period, billing retry, expiry after the retries, recovery) reaches the server as a notification
/// whose renewal info and status are those of its own step, however late the notifications are
/// sent, signed in the order the steps happened.
@Suite struct RenewalNotificationTests {
    struct Sent {
        var type: NotificationTypeV2?
        var subtype: NotificationSubtype?
        var signedDate: Date?
        var status: SubscriptionStatus?
        var renewal: JWSRenewalInfoDecodedPayload
    }

    /// Queues the events so far and verifies each notification as a server would.
    func queued(_ fixture: EngineFixture) async throws -> [Sent] {
        let verifier = try fixture.engine.signer.makeVerifier()
        var sent: [Sent] = []
        for record in try await fixture.engine.queueNotifications() {
            let notification = try await verifier.verifyNotification(record.signedPayload)
            #expect(notification.signedDate == record.signedDate)
            let renewal = try await verifier.verifyRenewalInfo(try #require(notification.data?.signedRenewalInfo))
            #expect(renewal.signedDate == notification.signedDate)
            sent.append(
                Sent(
                    type: notification.notificationType, subtype: notification.subtype,
                    signedDate: notification.signedDate, status: notification.data?.status, renewal: renewal))
        }
        return sent
    }

    @Test func eachStepCarriesItsOwnRenewalInfo() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "r@example.com")
        let first = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthly")).transaction)
        // Off and on again at the same moment of the sandbox clock, sent together afterwards.
        try await fixture.engine.setAutoRenew(false, originalTransactionID: first.id)
        try await fixture.engine.setAutoRenew(true, originalTransactionID: first.id)
        var sent = try await queued(fixture)
        #expect(sent.map(\.subtype) == [.initialBuy, .autoRenewDisabled, .autoRenewEnabled])
        #expect(sent.map(\.renewal.autoRenewStatus) == [.on, .off, .on])
        let dates = sent.compactMap(\.signedDate)
        #expect(dates.count == 3 && dates[0] < dates[1] && dates[1] < dates[2], "signed in order: \(dates)")

        // The trial's charge fails, and the clock jumps past the grace period too: two steps, two
        // notifications, each with the renewal info of its step.
        try await fixture.engine.failRenewals(originalTransactionID: first.id)
        let trialEnd = try #require(first.expiresDate)
        fixture.days(7 + 17)
        try await fixture.engine.processRenewals()
        sent = try await queued(fixture)
        #expect(sent.map(\.type) == [.didFailToRenew, .gracePeriodExpired])
        #expect(sent.first?.subtype == .gracePeriod)
        #expect(sent.map(\.status) == [.billingGracePeriod, .billingRetry])
        #expect(sent.allSatisfy { $0.renewal.isInBillingRetryPeriod == true }, "the App Store retries in both")
        #expect(sent.allSatisfy { $0.renewal.gracePeriodExpiresDate == trialEnd.addingTimeInterval(16 * 86_400) })
        #expect(sent.allSatisfy { $0.renewal.expirationIntent == nil && $0.renewal.autoRenewStatus == .on })
        #expect(try #require(sent.first?.signedDate) > dates[2] && sent[0].signedDate! < sent[1].signedDate!)

        // Recovery: a renewal, billing fine again.
        try await fixture.engine.resolveBillingIssue(originalTransactionID: first.id)
        sent = try await queued(fixture)
        #expect(sent.map(\.type) == [.didRenew] && sent.map(\.subtype) == [.billingRecovery])
        #expect(sent.first?.status == .active)
        #expect(
            sent.first?.renewal.isInBillingRetryPeriod == false && sent.first?.renewal.gracePeriodExpiresDate == nil)
    }

    @Test func billingRetryWithoutGraceEndsInExpiry() async throws {
        let fixture = try EngineFixture()
        try await fixture.engine.updateSettings(SandboxSettings(gracePeriodDays: 0))
        let tester = try await fixture.engine.createTester(name: "r@example.com")
        let first = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: "monthly")).transaction)
        _ = try await queued(fixture)
        try await fixture.engine.failRenewals(originalTransactionID: first.id)
        fixture.days(8)
        try await fixture.engine.processRenewals()
        fixture.days(61)
        try await fixture.engine.processRenewals()
        let sent = try await queued(fixture)
        #expect(sent.map(\.type) == [.didFailToRenew, .expired])
        #expect(sent.map(\.subtype) == [nil, .billingRetry])
        #expect(sent[0].status == .billingRetry && sent[0].renewal.isInBillingRetryPeriod == true)
        #expect(sent[0].renewal.gracePeriodExpiresDate == nil && sent[0].renewal.expirationIntent == nil)
        #expect(sent[1].status == .expired && sent[1].renewal.isInBillingRetryPeriod == false)
        #expect(sent[1].renewal.expirationIntent == .billingError)
    }
}
