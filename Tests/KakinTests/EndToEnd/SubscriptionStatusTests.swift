import AppStoreModels
import Foundation
import KakinWire
import StoreSandbox
import Testing

@testable import Kakin

/// A subscription's life in the sandbox, told to the server by the sandbox's App Store Server
/// Notifications, as the SDK's entitlement reports it: a free trial, auto-renewal turned off and on,
/// a failed renewal in its grace period, billing retry once the grace period is over, recovery.
/// The sandbox and the server share one clock that only the test moves.
@Suite(.serialized) struct SubscriptionStatusTests {
    static let monthly = "com.example.kakin.premium.monthly"
    static let day: TimeInterval = 86_400

    @Test func billingRetryAndGracePeriodReachTheSDKsEntitlement() async throws {
        let clock = SandboxClock.manual(at: Date(epochMilliseconds: Date().epochMilliseconds))
        let stack = try await LiveStack(clock: clock)
        try await stack.run { sandboxURL, serverURL in
            let engine = stack.engine
            _ = try await engine.createTester(name: "us@example.com", id: "us")
            let notificationURL = serverURL.appendingPathComponent("v1/notifications/apple")
            try await engine.updateSettings(SandboxSettings(gracePeriodDays: 16, notificationURL: notificationURL))
            let payments = try await PaymentManager(
                backend: SandboxBackend(baseURL: sandboxURL, testerID: "us", pollSeconds: 1),
                server: stack.client(serverURL), appUserID: "subscriber",
                storageDirectory: stack.directory.appendingPathComponent("s"))

            @discardableResult
            func deliver() async throws -> [NotificationRecord] {
                try await stack.deliverNotifications(to: notificationURL)
            }
            /// The SDK's `premium` entitlement, as the server answers now; `isEntitled(to:)` agrees
            /// with its `isActive`.
            func premium() async throws -> Entitlement {
                let customer = try await payments.customerInfo(allowOffline: false)
                #expect(customer.source == .server)
                let entitlement = try #require(customer.entitlements.first { $0.identifier == "premium" })
                #expect(customer.isEntitled(to: "premium", at: clock.now()) == entitlement.isActive)
                return entitlement
            }

            // A new subscriber gets the monthly plan's free week.
            let product = try #require(try await payments.products(for: [Self.monthly]).products.first)
            guard case .purchased(let bought, _) = try await payments.purchase(product) else {
                Issue.record("not purchased")
                return
            }
            let originalID = bought.originalID
            #expect(try await deliver().map(\.notificationType) == [.subscribed])
            var entitlement = try await premium()
            #expect(entitlement.isActive && entitlement.periodType == .trial && entitlement.willRenew == true)
            #expect(entitlement.billingIssueDetectedAt == nil && entitlement.gracePeriodExpiresAt == nil)
            let trialEnd = try #require(entitlement.expiresDate)
            #expect(trialEnd == bought.purchaseDate.addingTimeInterval(7 * Self.day))

            // The customer turns auto-renewal off, then on again.
            clock.advance(by: 3_600)
            try await engine.setAutoRenew(false, originalTransactionID: originalID)
            #expect(try await deliver().map(\.subtype) == [.autoRenewDisabled])
            entitlement = try await premium()
            #expect(entitlement.isActive && entitlement.willRenew == false && entitlement.periodType == .trial)
            clock.advance(by: 3_600)
            try await engine.setAutoRenew(true, originalTransactionID: originalID)
            #expect(try await deliver().map(\.subtype) == [.autoRenewEnabled])
            #expect(try await premium().willRenew == true)

            // The first charge fails: a billing problem, access kept through the grace period.
            try await engine.failRenewals(originalTransactionID: originalID)
            clock.set(trialEnd.addingTimeInterval(60))
            try await engine.processRenewals()
            let failure = try #require(try await deliver().first)
            #expect(failure.notificationType == .didFailToRenew && failure.subtype == .gracePeriod)
            let detected = try #require(failure.signedDate)
            let graceEnd = trialEnd.addingTimeInterval(16 * Self.day)
            entitlement = try await premium()
            #expect(entitlement.isActive, "service continues in the grace period")
            #expect(entitlement.billingIssueDetectedAt == detected)
            #expect(entitlement.gracePeriodExpiresAt == graceEnd)
            #expect(entitlement.willRenew == true && entitlement.expiresDate == trialEnd)

            // Later in the grace period, still the same problem, first seen at the same moment.
            clock.advance(by: 10 * Self.day)
            entitlement = try await premium()
            #expect(entitlement.isActive && entitlement.billingIssueDetectedAt == detected)

            // The grace period ends: billing retry, no access, the problem still reported.
            clock.set(graceEnd.addingTimeInterval(60))
            try await engine.processRenewals()
            #expect(try await deliver().map(\.notificationType) == [.gracePeriodExpired])
            entitlement = try await premium()
            #expect(!entitlement.isActive, "no access in billing retry after the grace period")
            #expect(entitlement.billingIssueDetectedAt == detected)
            #expect(entitlement.willRenew == true, "the App Store still retries the charge")

            // The customer fixes their payment method: the subscription renews, the problem is gone.
            clock.advance(by: Self.day)
            try await engine.resolveBillingIssue(originalTransactionID: originalID)
            let recovery = try await deliver()
            #expect(recovery.map(\.notificationType) == [.didRenew] && recovery.map(\.subtype) == [.billingRecovery])
            entitlement = try await premium()
            #expect(entitlement.isActive && entitlement.transactionID != bought.id)
            #expect(entitlement.periodType == .normal && entitlement.willRenew == true)
            #expect(entitlement.billingIssueDetectedAt == nil && entitlement.gracePeriodExpiresAt == nil)

            // Apple retrying the failure notification long after changes nothing.
            let retried = try #require(
                await engine.notificationHistory().first { $0.notificationType == .didFailToRenew })
            let body = try JSONEncoder().encode(ResponseBodyV2(signedPayload: retried.signedPayload))
            #expect(await URLSessionNotificationTransport().post(body, to: notificationURL) == .success)
            let after = try await premium()
            #expect(after.billingIssueDetectedAt == nil && after.isActive && after.willRenew == true)
            await payments.shutdown()
        }
    }
}
