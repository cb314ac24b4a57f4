import AppStoreModels
import Foundation
import KakinWire
import StoreSandbox
import Testing

@testable import Kakin

/// A parent withdraws consent for a child's use of the app (RESCIND_CONSENT), through the sandbox
/// and the server, as the SDK sees it: access ends and says why, the same notification again
/// changes nothing, and a new purchase the parent lets the child make brings access back.
@Suite(.serialized) struct ConsentEndToEndTests {
    @Test func aRescindedConsentEndsAccessUntilANewPurchase() async throws {
        // The sandbox and the server share one clock that only the test moves.
        let stack = try await LiveStack(clock: .manual(at: Date(epochMilliseconds: Date().epochMilliseconds)))
        let (clock, engine) = (stack.clock, stack.engine)
        try await stack.run { sandboxURL, serverURL in
            let notificationURL = serverURL.appendingPathComponent("v1/notifications/apple")
            try await engine.updateSettings(SandboxSettings(notificationURL: notificationURL))
            _ = try await engine.createTester(name: "kid@example.com", id: "kid")
            let backend = SandboxBackend(baseURL: sandboxURL, testerID: "kid", pollSeconds: 1)
            let payments = try await PaymentManager(
                backend: backend, server: stack.client(serverURL), appUserID: "kid-account",
                storageDirectory: stack.directory.appendingPathComponent("kid"))

            @discardableResult
            func deliver() async throws -> [NotificationRecord] {
                try await stack.deliverNotifications(to: notificationURL)
            }
            func entitlement(_ identifier: String) async throws -> (Entitlement, CustomerInfo) {
                let customer = try await payments.customerInfo(allowOffline: false)
                #expect(customer.source == .server)
                return (try #require(customer.entitlements.first { $0.identifier == identifier }), customer)
            }

            // The child buys, and the app reports its download (its app transaction) for the account.
            let removeAd = try #require(
                try await payments.products(for: ["com.example.kakin.removeAd"]).products.first)
            guard case .purchased = try await payments.purchase(removeAd) else {
                Issue.record("not purchased")
                return
            }
            try await deliver()
            let appTransaction = try #require(try await backend.appTransaction())
            _ = try await stack.client(serverURL).linkAppTransaction(appTransaction, appUserID: "kid-account")
            var (removeAds, customer) = try await entitlement("removeAds")
            #expect(removeAds.isActive && removeAds.consentRescindedDate == nil)
            #expect(customer.isEntitled(to: "removeAds", at: clock.now()))

            // A parent withdraws consent: the sandbox sends RESCIND_CONSENT, access ends and says why.
            clock.advance(by: 3_600)
            let rescinded = try #require(try await engine.rescindConsent(of: "kid").consentRescindedDate)
            #expect(try await deliver().map(\.notificationType) == [.rescindConsent])
            (removeAds, customer) = try await entitlement("removeAds")
            #expect(!removeAds.isActive)
            #expect(removeAds.consentRescindedDate == rescinded)
            #expect(!customer.isEntitled(to: "removeAds", at: clock.now()))
            #expect(
                try await stack.store.appTransactionCustomer(
                    bundleID: LiveStack.bundleID, appTransactionID: try engine.appTransactionID(of: "kid")) == nil,
                "the download's link to the account is consent-scoped: erased")

            // Apple sending the same notification again changes nothing.
            let sent = try #require(
                await engine.notificationHistory().first { $0.notificationType == .rescindConsent })
            let body = try JSONEncoder().encode(ResponseBodyV2(signedPayload: sent.signedPayload))
            #expect(await URLSessionNotificationTransport().post(body, to: notificationURL) == .success)
            let again = try #require(
                try await stack.store.consentRescission(bundleID: LiveStack.bundleID, appUserID: "kid-account"))
            #expect(again.rescindedAt == rescinded && again.notificationUUID == sent.notificationUUID)
            #expect(try await entitlement("removeAds").0.consentRescindedDate == rescinded)

            // The parent consents again and lets the child buy: access comes back.
            clock.advance(by: 3_600)
            _ = try await engine.restoreConsent(of: "kid")
            let unlock = try #require(try await payments.products(for: ["com.example.kakin.unlock"]).products.first)
            guard case .purchased = try await payments.purchase(unlock) else {
                Issue.record("not purchased")
                return
            }
            (removeAds, customer) = try await entitlement("removeAds")
            #expect(removeAds.isActive && removeAds.consentRescindedDate == nil)
            #expect(customer.isEntitled(to: "unlock", at: clock.now()))
            await payments.shutdown()
        }
    }
}
