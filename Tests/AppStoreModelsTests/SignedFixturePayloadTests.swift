import AppStoreModels
import Foundation
import KakinTestSupport
import Testing

/// The payloads of real signed fixtures (Xcode's StoreKit testing and Apple's library mocks),
/// decoded without verifying the signature: they show what the App Store writes beyond the model
/// fixtures, such as fractional and pre-1970 dates.
@Suite(.enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
struct SignedFixturePayloadTests {
    @Test func xcodeTransaction() throws {
        let payload = try SharedFixtures.jwsPayload("xcode/xcode-signed-transaction")
        let outcome = try RoundTrip.run(JWSTransactionDecodedPayload.self, payload)
        let transaction = outcome.first
        #expect(outcome.first == outcome.second)
        #expect(outcome.differences.isEmpty, "\(outcome.differences)")
        #expect(transaction.environment == .xcode)
        #expect(transaction.bundleID == "com.example.naturelab.backyardbirds.example")
        #expect(transaction.productID == "pass.premium")
        #expect(transaction.transactionID == "0")
        #expect(transaction.type == .autoRenewableSubscription)
        #expect(transaction.isUpgraded == false)
        #expect(transaction.deviceVerificationNonce == "7edea87d-98f0-42d0-9682-49ca81022f73")
        #expect(transaction.deviceVerification?.count == 64)
        let purchase = try #require(transaction.purchaseDate)
        #expect(abs(purchase.timeIntervalSince1970 * 1000 - 1_697_679_936_049.7297) < 0.001)
    }

    @Test func xcodeRenewalInfo() throws {
        let payload = try SharedFixtures.jwsPayload("xcode/xcode-signed-renewal-info")
        let outcome = try RoundTrip.run(JWSRenewalInfoDecodedPayload.self, payload)
        #expect(outcome.first == outcome.second)
        #expect(outcome.differences.isEmpty, "\(outcome.differences)")
        #expect(outcome.first.environment == .xcode)
        #expect(outcome.first.autoRenewStatus == .on)
        #expect(outcome.first.autoRenewProductID == "pass.premium")
        #expect(outcome.first.renewalDate != nil)
    }

    @Test func xcodeAppTransactionHasYearOneOriginalPurchaseDate() throws {
        let payload = try SharedFixtures.jwsPayload("xcode/xcode-signed-app-transaction")
        let outcome = try RoundTrip.run(AppTransaction.self, payload)
        #expect(outcome.first == outcome.second)
        #expect(outcome.differences.isEmpty, "\(outcome.differences)")
        let app = outcome.first
        #expect(app.receiptType == .xcode)
        #expect(app.originalPurchaseDate == Date(epochMilliseconds: -62_135_769_600_000))
        #expect(app.requestDate != nil)
        #expect(app.signedPayloadDate == app.receiptCreationDate)
    }

    @Test func mockTestNotification() throws {
        let payload = try SharedFixtures.jwsPayload("mock_signed_data/testNotification")
        let outcome = try RoundTrip.run(ResponseBodyV2DecodedPayload.self, payload)
        #expect(outcome.differences.isEmpty, "\(outcome.differences)")
        let notification = outcome.first
        #expect(notification.notificationType == .test)
        #expect(notification.signedPayloadBundleID == "com.example")
        #expect(notification.signedPayloadAppAppleID == 1234)
        #expect(notification.signedPayloadEnvironment == .sandbox)
        #expect(notification.signedPayloadDate == Date(epochMilliseconds: 1_681_314_324_000))
    }

    @Test func mockTransactionAndRenewalInfo() throws {
        let transaction = try JSONDecoder().decode(
            JWSTransactionDecodedPayload.self,
            from: try SharedFixtures.jwsPayload("mock_signed_data/transactionInfo"))
        #expect(transaction.signedPayloadBundleID == "com.example")
        #expect(transaction.signedPayloadEnvironment == .sandbox)
        #expect(transaction.signedPayloadDate == Date(epochMilliseconds: 1_672_956_154_000))
        let renewal = try JSONDecoder().decode(
            JWSRenewalInfoDecodedPayload.self,
            from: try SharedFixtures.jwsPayload("mock_signed_data/renewalInfo"))
        #expect(renewal.signedPayloadEnvironment == .sandbox)
        #expect(renewal.signedPayloadDate == Date(epochMilliseconds: 1_672_956_154_000))
    }

    @Test func mockWrongBundleNotificationHasNoSignedDate() throws {
        let notification = try JSONDecoder().decode(
            ResponseBodyV2DecodedPayload.self,
            from: try SharedFixtures.jwsPayload("mock_signed_data/wrongBundleId"))
        #expect(notification.signedPayloadBundleID == "com.example.wrong")
        #expect(notification.signedPayloadDate == nil)
    }
}
