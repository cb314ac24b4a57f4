import AppStoreModels
import Foundation
import Testing

@testable import AppStoreSecurity
import AppStoreTesting

@Suite struct SignedClaimsTests {
    let signer = JWSSigner(identity: TestAuthority.shared.signingIdentity)
    let verifier = JWSVerifier(rootCertificates: [TestAuthority.shared.root])

    func claims(_ object: [String: Any]) async throws -> SignedClaims {
        try await verifier.verify(
            try signer.sign(payload: try JSONSerialization.data(withJSONObject: object)), as: SignedClaims.self
        ).payload
    }

    @Test func recognisesEachKindAndItsClaims() async throws {
        let date = TestAuthority.now.epochMilliseconds
        let transaction = try await claims([
            "transactionId": "1", "bundleId": "b", "environment": "Sandbox", "signedDate": date,
        ])
        #expect(transaction.kind == .transaction)
        #expect(transaction.checks == [.bundleID, .environment])
        #expect(transaction.signedPayloadBundleID == "b")

        let renewal = try await claims(["autoRenewProductId": "p", "environment": "Sandbox", "signedDate": date])
        #expect(renewal.kind == .renewalInfo)
        #expect(renewal.checks == [.environment])

        let notification = try await claims([
            "notificationType": "REFUND", "signedDate": date,
            "data": ["bundleId": "b", "appAppleId": 7, "environment": "Production"],
        ])
        #expect(notification.kind == .notification)
        #expect(notification.signedPayloadAppAppleID == 7)
        #expect(notification.signedPayloadEnvironment == .production)

        let app = try await claims(["receiptType": "Sandbox", "bundleId": "b", "receiptCreationDate": date])
        #expect(app.kind == .appTransaction)
        #expect(app.signedPayloadDate == TestAuthority.now)
        #expect(app.signedPayloadEnvironment == .sandbox)

        let token = try await claims([
            "notificationType": "EXTERNAL_PURCHASE_TOKEN", "signedDate": date,
            "externalPurchaseToken": ["externalPurchaseId": "SANDBOX_123", "bundleId": "b", "appAppleId": 7],
        ])
        #expect(token.signedPayloadEnvironment == .sandbox)
    }
}
