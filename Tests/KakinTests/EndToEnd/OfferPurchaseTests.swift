import AppStoreModels
import Foundation
import Kakin
import KakinWire
import StoreSandbox
import Testing

/// Offers bought through the SDK against a live purchase server and sandbox App Store: the server
/// signs a promotional offer for the customer, the sandbox checks the signature as the App Store
/// does and charges the offer's price; a tampered or replayed signature fails with StoreKit's error.
@MainActor @Suite struct OfferPurchaseTests {
    static let monthly = "com.example.kakin.premium.monthly"

    @Test func aPromotionalOfferSignedByTheServerIsChargedAtTheOfferPrice() async throws {
        let stack = try await LiveStack()
        try await stack.run { @MainActor sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "us@example.com", storefront: "USA", id: "us")
            let store = try await KakinStore.configure(
                .init(
                    serverURL: serverURL, bundleID: LiveStack.bundleID, publishableKey: "pk_test",
                    serverKey: stack.serverKey.publicKey, appUserID: "mika",
                    storageDirectory: stack.directory.appendingPathComponent("phone")),
                backend: SandboxBackend(baseURL: sandboxURL, testerID: "us", pollSeconds: 1))
            await store.loadProducts([Self.monthly])
            let product = try #require(store.products.first)
            let offer = try #require(product.promotionalOffers.first { $0.id == "comeback50" })
            #expect(offer.displayPrice == "$2.49")

            let outcome = try await store.purchase(product, offer: offer)
            guard case .purchased(let transaction, let customer?) = outcome else {
                Issue.record("expected a delivered purchase, got \(outcome)")
                return
            }
            #expect(customer.isEntitled(to: "premium"))
            let bought = try #require(await stack.engine.snapshot.transactions[transaction.id])
            #expect(bought.offerType == .promotional && bought.offerIdentifier == "comeback50")
            #expect(bought.priceMilliunits == 2_490, "the offer's price, not the product's 4.99")
            let logged = try await stack.store.offerSignatures(bundleID: LiveStack.bundleID, limit: 10)
            #expect(logged.map(\.offerID) == ["comeback50"] && logged.first?.appUserID == "mika")
            await store.shutdown()
        }
    }

    @Test func aTamperedOrReplayedSignatureFailsWithStoreKitsError() async throws {
        let stack = try await LiveStack()
        try await stack.run { @MainActor sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "us@example.com", storefront: "USA", id: "us")
            let client = stack.client(serverURL)
            let backend = SandboxBackend(baseURL: sandboxURL, testerID: "us", pollSeconds: 1)
            // The server signs offers over the customer's own app account token only.
            let token = StoreSession.accountToken(for: "mika")
            let signed = try await client.signOffer(
                .promotional, productID: Self.monthly, offerID: "comeback50", appAccountToken: token, appUserID: "mika")
            #expect(signed.signature != nil && signed.keyId == LiveStack.offerKeyID)

            // The JWS's payload changed (another offer) while its signature stayed: refused.
            let parts = signed.jws.split(separator: ".").map(String.init)
            let payload = try #require(Data(base64URL: parts[1]))
            let forged = String(decoding: payload, as: UTF8.self).replacingOccurrences(
                of: "comeback50", with: "com.example.kakin.premium.monthly.comeback")
            var tampered = signed
            tampered.offerId = "com.example.kakin.premium.monthly.comeback"
            tampered.jws = [parts[0], Data(forged.utf8).base64URLEncoded, parts[2]].joined(separator: ".")
            await #expect(throws: KakinError.self) {
                _ = try await backend.purchase(
                    Self.monthly, options: .init(appAccountToken: token, promotionalOffer: tampered))
            }
            do {
                _ = try await backend.purchase(
                    Self.monthly, options: .init(appAccountToken: token, promotionalOffer: tampered))
            } catch {
                #expect(PaymentError(error) == .invalidOfferSignature)
            }

            // The genuine one works once; the same nonce again is refused.
            let first = try await backend.purchase(
                Self.monthly, options: .init(appAccountToken: token, promotionalOffer: signed))
            guard case .purchased = first else {
                Issue.record("expected the signed offer to be bought, got \(first)")
                return
            }
            do {
                _ = try await backend.purchase(
                    Self.monthly, options: .init(appAccountToken: token, promotionalOffer: signed))
                Issue.record("a replayed offer signature was accepted")
            } catch {
                #expect(PaymentError(error) == .invalidOfferSignature)
            }
        }
    }

    @Test func theServerSignsOnlyOffersItsCatalogHasForCustomersTheRuleAllows() async throws {
        let stack = try await LiveStack()
        try await stack.run { @MainActor _, serverURL in
            let client = stack.client(serverURL)
            do {
                _ = try await client.signOffer(
                    .promotional, productID: Self.monthly, offerID: "nope", appUserID: "mika")
                Issue.record("an offer the catalog lacks was signed")
            } catch let error as KakinError {
                #expect(error.serverCode == "notFound")
            }
            // The comeback offer is for lapsed subscribers only; mika never subscribed.
            do {
                _ = try await client.signOffer(
                    .promotional, productID: Self.monthly, offerID: "com.example.kakin.premium.monthly.comeback",
                    appUserID: "mika")
                Issue.record("an offer for lapsed subscribers was signed for a customer who never subscribed")
            } catch let error as KakinError {
                #expect(error.serverCode == "notEntitled" && error.cause == "offerIneligible")
            }
            // A win-back offer is not a promotional offer: the store checks it without a signature.
            do {
                _ = try await client.signOffer(.promotional, productID: Self.monthly, offerID: "winback1", appUserID: "mika")
                Issue.record("a win-back offer was signed as a promotional offer")
            } catch let error as KakinError {
                #expect(error.serverCode == "notFound")
            }
            let logged = try await stack.store.offerSignatures(bundleID: nil, limit: 10)
            #expect(logged.isEmpty, "refusals sign nothing")
        }
    }
}

extension Data {
    init?(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        self.init(base64Encoded: base64)
    }

    var base64URLEncoded: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
