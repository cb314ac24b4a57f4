import AppStoreModels
import AppStoreSecurity
import Crypto
import Foundation
import StoreSandbox
import Testing

/// The sandbox checks promotional offer and introductory-offer eligibility signatures as the App
/// Store does before it applies them.
@Suite struct OfferSignatureTests {
    func buy(
        _ fixture: EngineFixture, _ tester: SandboxTester, offer: String? = "comeback",
        signature: PromotionalOfferSignature?, eligibility: String? = nil, token: UUID? = nil
    ) async throws -> PurchaseOutcome {
        try await fixture.engine.purchase(
            .init(
                testerID: tester.id, productID: "monthly", appAccountToken: token, promotionalOfferID: offer,
                promotionalOfferSignature: signature, introductoryOfferEligibilityJWS: eligibility),
            offerKeys: EngineFixture.offerKeys)
    }

    @Test func aGoodSignatureBuysAtTheOfferPriceOnceItsNonceIsUsed() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "o@example.com")
        let signature = try fixture.signedOffer("comeback")
        let bought = try #require(try await buy(fixture, tester, signature: signature).transaction)
        #expect(bought.offerType == .promotional && bought.priceMilliunits == 1_990)
        #expect(try await buy(fixture, tester, signature: signature) == .failed(.invalidSignature))
    }

    @Test func badSignaturesFailWithStoreKitsErrors() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "o@example.com")
        // No signature at all.
        #expect(try await buy(fixture, tester, signature: nil) == .failed(.missingOfferParams))
        // An offer the product does not have, however well signed.
        #expect(
            try await buy(fixture, tester, offer: "nope", signature: try fixture.signedOffer("nope"))
                == .failed(.invalidOfferIdentifier))
        // Signed for another offer of the same product.
        #expect(
            try await buy(fixture, tester, signature: try fixture.signedOffer("other"))
                == .failed(.invalidSignature))
        // Signed for another product.
        #expect(
            try await buy(fixture, tester, signature: try fixture.signedOffer("comeback", product: "yearly"))
                == .failed(.invalidSignature))
        // Signed more than 24 hours ago.
        #expect(
            try await buy(
                fixture, tester,
                signature: try fixture.signedOffer(
                    "comeback", issuedAt: EngineFixture.start.addingTimeInterval(-25 * 3600)))
                == .failed(.invalidSignature))
        // Signed by a key nobody registered.
        let stranger = OfferSigner(
            keyID: "OFFERKEY01", issuerID: EngineFixture.offerSigner.issuerID, bundleID: "com.example.kakin",
            privateKey: P256.Signing.PrivateKey())
        let forged = PromotionalOfferSignature(
            compactJWS: try stranger.promotionalOffer(
                productID: "monthly", offerID: "comeback", transactionID: nil, nonce: UUID(), issuedAt: fixture.clock.now()))
        #expect(try await buy(fixture, tester, signature: forged) == .failed(.invalidSignature))
        #expect(await fixture.engine.transactions(of: tester.id).isEmpty, "nothing was charged")
    }

    @Test func theOlderSignatureCoversTheAppAccountToken() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "o@example.com")
        let token = UUID()
        let nonce = UUID()
        let timestamp = Int64(fixture.clock.now().timeIntervalSince1970 * 1000)
        let value = try EngineFixture.offerSigner.legacyPromotionalOffer(
            productID: "monthly", offerID: "comeback", applicationUsername: token.uuidString, nonce: nonce,
            timestamp: timestamp)
        let signature = PromotionalOfferSignature(
            keyID: "OFFERKEY01", nonce: nonce, timestamp: timestamp, signature: value)
        // Another token than the one signed: refused.
        #expect(try await buy(fixture, tester, signature: signature, token: UUID()) == .failed(.invalidSignature))
        let bought = try #require(try await buy(fixture, tester, signature: signature, token: token).transaction)
        #expect(bought.offerIdentifier == "comeback" && bought.appAccountToken == token.uuidString.lowercased())
    }

    @Test func anEligibilityDecidesTheIntroductoryOffer() async throws {
        let fixture = try EngineFixture()
        let tester = try await fixture.engine.createTester(name: "o@example.com")
        let appTransactionID = try await fixture.engine.appTransactionID(of: tester.id)
        func eligibility(_ allow: Bool) throws -> String {
            try EngineFixture.offerSigner.introductoryOfferEligibility(
                productID: "monthly", allowIntroductoryOffer: allow, transactionID: appTransactionID, nonce: UUID(),
                issuedAt: fixture.clock.now())
        }
        // A new customer would get the free trial; the server says no.
        let refused = try #require(
            try await buy(fixture, tester, offer: nil, signature: nil, eligibility: try eligibility(false)).transaction)
        #expect(refused.offerType == nil && refused.priceMilliunits == 4_990)
        // An eligibility naming someone else's transaction is refused.
        let other = try await fixture.engine.createTester(name: "x@example.com")
        #expect(
            try await buy(fixture, other, offer: nil, signature: nil, eligibility: try eligibility(true))
                == .failed(.invalidSignature))
    }
}
