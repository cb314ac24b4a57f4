import AppStoreSecurity
import Crypto
import Foundation
import KakinTestSupport
import Testing

/// Offer signatures: what Kakin signs verifies, tampering is caught, and Apple's own library
/// (Python) signs exactly what Kakin's verifier accepts.
@Suite struct OfferSignatureTests {
    static let key = P256.Signing.PrivateKey()
    static let issuer = "57246542-96fe-1a63-e053-0824d011072a"
    static let signer = OfferSigner(keyID: "KEY1234567", issuerID: issuer, bundleID: "com.example.kakin", privateKey: key)
    static let verifier = OfferSignatureVerifier(
        keys: [.init(keyID: "KEY1234567", issuerID: issuer, publicKey: key.publicKey)])
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    @Test func aPromotionalOfferJWSCarriesApplesClaims() throws {
        let nonce = UUID()
        let jws = try Self.signer.promotionalOffer(
            productID: "monthly", offerID: "comeback50", transactionID: "2000000000000001", nonce: nonce,
            issuedAt: Self.now)
        let claims = try Self.verifier.verify(
            jws: jws, audience: OfferSignatures.promotionalOfferAudience, bundleID: "com.example.kakin",
            productID: "monthly", now: Self.now.addingTimeInterval(3600))
        #expect(claims.offerIdentifier == "comeback50" && claims.transactionID == "2000000000000001")
        #expect(claims.nonce == nonce.uuidString.lowercased() && claims.issuedAt == 1_790_000_000)
        #expect(claims.issuer == Self.issuer && claims.audience == "promotional-offer")
        // Another app, another product, another purpose, or a day later: refused.
        #expect(throws: AppStoreSecurityError.self) {
            try Self.verifier.verify(
                jws: jws, audience: OfferSignatures.promotionalOfferAudience, bundleID: "com.example.other",
                productID: "monthly", now: Self.now)
        }
        #expect(throws: AppStoreSecurityError.self) {
            try Self.verifier.verify(
                jws: jws, audience: OfferSignatures.promotionalOfferAudience, bundleID: "com.example.kakin",
                productID: "yearly", now: Self.now)
        }
        #expect(throws: AppStoreSecurityError.self) {
            try Self.verifier.verify(
                jws: jws, audience: OfferSignatures.introductoryOfferEligibilityAudience,
                bundleID: "com.example.kakin", productID: "monthly", now: Self.now)
        }
        #expect(throws: AppStoreSecurityError.self) {
            try Self.verifier.verify(
                jws: jws, audience: OfferSignatures.promotionalOfferAudience, bundleID: "com.example.kakin",
                productID: "monthly", now: Self.now.addingTimeInterval(25 * 3600))
        }
    }

    @Test func theOlderSignatureCoversEveryPart() throws {
        let nonce = UUID()
        let token = UUID().uuidString
        let signature = try Self.signer.legacyPromotionalOffer(
            productID: "monthly", offerID: "comeback50", applicationUsername: token, nonce: nonce,
            timestamp: 1_790_000_000_000)
        try Self.verifier.verifyLegacy(
            signature: signature, keyID: "KEY1234567", bundleID: "com.example.kakin", productID: "monthly",
            offerID: "comeback50", applicationUsername: token.lowercased(), nonce: nonce, timestamp: 1_790_000_000_000,
            now: Self.now)
        #expect(throws: AppStoreSecurityError.self) {
            try Self.verifier.verifyLegacy(
                signature: signature, keyID: "KEY1234567", bundleID: "com.example.kakin", productID: "monthly",
                offerID: "comeback50", applicationUsername: "", nonce: nonce, timestamp: 1_790_000_000_000,
                now: Self.now)
        }
        #expect(throws: AppStoreSecurityError.self) {
            try Self.verifier.verifyLegacy(
                signature: signature, keyID: "KEY1234567", bundleID: "com.example.kakin", productID: "monthly",
                offerID: "comeback50", applicationUsername: token, nonce: nonce, timestamp: 1_790_000_000_001,
                now: Self.now)
        }
    }

    @Test(.enabled(if: ApplePythonLibrary.available, ApplePythonLibrary.skipMessage))
    func applesLibrarySignsWhatKakinVerifies() async throws {
        let script = """
            import sys, uuid
            from appstoreserverlibrary.jws_signature_creator import PromotionalOfferV2SignatureCreator, IntroductoryOfferEligibilitySignatureCreator
            from appstoreserverlibrary.promotional_offer import PromotionalOfferSignatureCreator
            key = sys.argv[1].encode()
            v2 = PromotionalOfferV2SignatureCreator(key, "KEY1234567", sys.argv[2], "com.example.kakin")
            print(v2.create_signature("monthly", "comeback50", "2000000000000001"))
            intro = IntroductoryOfferEligibilitySignatureCreator(key, "KEY1234567", sys.argv[2], "com.example.kakin")
            print(intro.create_signature("monthly", False, "2000000000000001"))
            v1 = PromotionalOfferSignatureCreator(key, "KEY1234567", "com.example.kakin")
            print(v1.create_signature("monthly", "comeback50", sys.argv[3], uuid.UUID(sys.argv[4]), int(sys.argv[5])))
            """
        let token = UUID().uuidString
        let nonce = UUID()
        let now = Date()
        let timestamp = Int64(now.timeIntervalSince1970 * 1000)
        let result = try await Python.run(
            script,
            arguments: [Self.key.pemRepresentation, Self.issuer, token, nonce.uuidString, String(timestamp)])
        #expect(result.status == 0, "\(result.output)")
        let lines = result.output.split(separator: "\n").map(String.init)
        try #require(lines.count == 3)
        let promotional = try Self.verifier.verify(
            jws: lines[0], audience: OfferSignatures.promotionalOfferAudience, bundleID: "com.example.kakin",
            productID: "monthly", now: now)
        #expect(promotional.offerIdentifier == "comeback50" && promotional.transactionID == "2000000000000001")
        let eligibility = try Self.verifier.verify(
            jws: lines[1], audience: OfferSignatures.introductoryOfferEligibilityAudience,
            bundleID: "com.example.kakin", productID: "monthly", now: now)
        #expect(eligibility.allowIntroductoryOffer == false)
        try Self.verifier.verifyLegacy(
            signature: lines[2], keyID: "KEY1234567", bundleID: "com.example.kakin", productID: "monthly",
            offerID: "comeback50", applicationUsername: token, nonce: nonce, timestamp: timestamp, now: now)
    }
}
