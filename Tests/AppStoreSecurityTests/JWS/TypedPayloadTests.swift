import AppStoreModels
import Foundation
import KakinTestSupport
import Testing
import X509

@testable import AppStoreSecurity
import AppStoreTesting

/// The typed entry points decode Apple's payload models and apply each kind's checks.
@Suite struct TypedPayloadTests {
    let authority = TestAuthority.shared
    var signer: JWSSigner { JWSSigner(identity: authority.signingIdentity) }
    var verifier: SignedDataVerifier {
        try! SignedDataVerifier(
            rootCertificates: [authority.root], bundleID: "com.example.kakin", appAppleID: 42, environment: .sandbox)
    }

    @Test func transactionRoundTrip() async throws {
        let transaction = JWSTransactionDecodedPayload(
            transactionID: "1001", originalTransactionID: "1001", bundleID: "com.example.kakin",
            productID: "com.example.kakin.removeAd", purchaseDate: TestAuthority.now, quantity: 1,
            type: .nonConsumable, inAppOwnershipType: .purchased, signedDate: TestAuthority.now, environment: .sandbox,
            storefront: "JPN", storefrontID: "143462", transactionReason: .purchase, currency: "JPY", price: 100_000)
        let verified = try await verifier.verifyTransaction(try signer.sign(transaction))
        #expect(verified == transaction)
    }

    @Test func renewalInfoHasNoBundleToCheck() async throws {
        let renewal = JWSRenewalInfoDecodedPayload(
            originalTransactionID: "1001", autoRenewProductID: "com.example.kakin.premium.yearly",
            productID: "com.example.kakin.premium.monthly", autoRenewStatus: .on, signedDate: TestAuthority.now,
            environment: .sandbox)
        await #expect(try verifier.verifyRenewalInfo(try signer.sign(renewal)) == renewal)
    }

    @Test func notificationClaimsComeFromData() async throws {
        let notification = ResponseBodyV2DecodedPayload(
            notificationType: .test, notificationUUID: UUID().uuidString,
            data: NotificationData(appAppleID: 42, bundleID: "com.example.kakin", environment: .sandbox),
            version: "2.0", signedDate: TestAuthority.now)
        await #expect(try verifier.verifyNotification(try signer.sign(notification)).notificationType == .test)
        var other = notification
        other.data?.bundleID = "com.example.other"
        await #expect(throws: AppStoreSecurityError(.wrongBundleID)) {
            try await verifier.verifyNotification(try await signer.sign(other))
        }
    }

    @Test func appTransactionIsCheckedAtItsCreationDate() async throws {
        let app = AppTransaction(
            receiptType: .sandbox, appAppleID: 42, bundleID: "com.example.kakin", applicationVersion: "1",
            receiptCreationDate: TestAuthority.now, originalApplicationVersion: "1")
        await #expect(try verifier.verifyAppTransaction(try signer.sign(app)).bundleID == "com.example.kakin")
        var old = app
        old.receiptCreationDate = Date(timeIntervalSince1970: 0)
        await #expect(throws: AppStoreSecurityError(.certificateNotYetValid)) {
            try await verifier.verifyAppTransaction(try await signer.sign(old))
        }
    }

    @Test func aTransactionIsNotANotification() async throws {
        let transaction = JWSTransactionDecodedPayload(
            bundleID: "com.example.kakin", signedDate: TestAuthority.now, environment: .sandbox)
        await #expect(throws: AppStoreSecurityError(.wrongBundleID)) {
            try await verifier.verifyNotification(try await signer.sign(transaction))
        }
    }
}

@Suite(.enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
struct TypedAppleFixtureTests {
    @Test func applesMockDataDecodesIntoTheModels() async throws {
        let root = try Certificate.load(derOrPEM: try SharedFixtures.data("certs/testCA.der"))
        let verifier = try SignedDataVerifier(
            rootCertificates: [root], bundleID: "com.example", appAppleID: 1234, environment: .sandbox)
        let notification = try await verifier.verifyNotification(try SharedFixtures.text("mock_signed_data/testNotification"))
        #expect(notification.notificationType == .test)
        let transaction = try await verifier.verifyTransaction(try SharedFixtures.text("mock_signed_data/transactionInfo"))
        #expect(transaction.bundleID == "com.example")
        _ = try await verifier.verifyRenewalInfo(try SharedFixtures.text("mock_signed_data/renewalInfo"))
    }
}
