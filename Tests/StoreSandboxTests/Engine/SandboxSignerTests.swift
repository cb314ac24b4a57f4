import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Foundation
import KakinTestSupport
import StoreSandbox
import Testing

@Suite struct SandboxSignerTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let authority = try! SandboxCertificateAuthority.generate(now: now)
    let signer = SandboxSigner(authority: authority, bundleID: ExampleApp.bundleID, appAppleID: ExampleApp.appAppleID)

    func transaction(
        _ id: String, _ product: String, _ type: ProductType, finished: Bool = false, expires: Date? = nil
    ) -> SandboxTransaction {
        SandboxTransaction(
            id: id, originalID: id, testerID: "tester", productID: product, productType: type,
            purchaseDate: Self.now, originalPurchaseDate: Self.now, expiresDate: expires, storefront: "JPN",
            storefrontID: "143462", currency: "JPY", priceMilliunits: 100_000, isFinished: finished,
            appTransactionID: "704000000000000001")
    }

    @Test func signedTransactionsCarryApplesFieldsAndVerify() async throws {
        let verifier = try signer.makeVerifier()
        let record = transaction("2000000000000001", "com.example.kakin.removeAd", .nonConsumable)
        let payload = try await verifier.verifyTransaction(try signer.signTransaction(record, at: Self.now))
        #expect(payload.transactionID == "2000000000000001")
        #expect(payload.bundleID == ExampleApp.bundleID)
        #expect(payload.environment == .sandbox)
        #expect(payload.type == .nonConsumable)
        #expect(payload.storefront == "JPN")
        #expect(payload.currency == "JPY")
        #expect(payload.price == 100_000)
        #expect(payload.signedDate == Self.now)
        #expect(payload.inAppOwnershipType == .purchased)
        #expect(payload.appTransactionID == "704000000000000001")
    }

    @Test func renewalInfoNotificationAndAppTransactionVerify() async throws {
        let verifier = try signer.makeVerifier()
        let renewal = try await verifier.verifyRenewalInfo(
            try signer.signRenewalInfo(
                JWSRenewalInfoDecodedPayload(
                    originalTransactionID: "1", autoRenewProductID: "p", productID: "p", autoRenewStatus: .on),
                at: Self.now))
        #expect(renewal.environment == .sandbox)
        let notification = try await verifier.verifyNotification(
            try signer.signNotification(
                ResponseBodyV2DecodedPayload(
                    notificationType: .test, notificationUUID: UUID().uuidString.lowercased(),
                    data: NotificationData(
                        appAppleID: ExampleApp.appAppleID, bundleID: ExampleApp.bundleID, environment: .sandbox)),
                at: Self.now))
        #expect(notification.version == "2.0")
        let nonce = UUID()
        let device = UUID()
        let app = try await verifier.verifyAppTransaction(
            try signer.signAppTransaction(
                appTransactionID: "704000000000000001", originalPurchaseDate: Self.now, deviceVerificationNonce: nonce,
                deviceIdentifier: device, at: Self.now))
        #expect(app.receiptType == .sandbox)
        #expect(app.appAppleID == ExampleApp.appAppleID)
        #expect(app.deviceVerification == SandboxSigner.deviceVerification(nonce: nonce, device: device))
        #expect(Data(base64Encoded: app.deviceVerification ?? "")?.count == 48)
    }

    @Test func appReceiptListsWhatTheAppStoreLists() async throws {
        let device = UUID()
        let bytes = try signer.appReceipt(
            transactions: [
                transaction("1", "com.example.kakin.removeAd", .nonConsumable, finished: true),
                transaction("2", "com.example.kakin.increasePoints", .consumable, finished: true),
                transaction("3", "com.example.kakin.credits5", .consumable, finished: false),
                transaction(
                    "4", "com.example.kakin.premium.monthly", .autoRenewableSubscription, finished: true,
                    expires: Self.now.addingTimeInterval(30 * 86_400)),
            ], originalPurchaseDate: Self.now, deviceIdentifier: device, opaqueValue: Data([1, 2, 3, 4, 5, 6, 7, 8]),
            at: Self.now)
        let signed = try SignedAppReceipt(bytes: bytes)
        let result = try await signed.verify(
            roots: [Self.authority.root], bundleID: ExampleApp.bundleID,
            deviceIdentifier: AppReceipt.deviceIdentifier(from: device))
        #expect(result.chainVerified)
        #expect(result.deviceHashVerified)
        #expect(result.receipt.receiptType == .productionSandbox)
        #expect(result.receipt.inAppPurchases.map(\.transactionID) == ["1", "3", "4"])
        #expect(result.receipt.inAppPurchases.last?.expiresDate == Self.now.addingTimeInterval(30 * 86_400))
    }
}
