import Foundation
import KakinWire
import Testing

@testable import KakinCLI

/// `kakin serve` end to end: the purchase server signs a promotional offer with the In-App
/// Purchase key it made, and its sandbox App Store sells the subscription at the offer's price;
/// the same signature again, or a tampered one, fails with StoreKit's error.
@Suite struct ServeOfferTests {
    @Test func anOfferSignedByKakinServeIsSoldAtTheOfferPriceOnce() async throws {
        let scratch = try ScratchDirectory()
        let serve = try await ServeRevocationTests.Serve(data: scratch.path("data"), arguments: [])
        defer { _ = serve.process.stop() }
        let added = try await exchange(
            "POST", "\(serve.sandbox)/v1/control/testers", json: ["name": "offer@example.com", "id": "offer"])
        #expect(added.status == 201, "\(added.body)")
        // The server signs over the customer's own account token, the one the SDK buys with.
        let token = AppAccountToken.derived(from: "mika").uuidString.lowercased()
        let signed = try await exchange(
            "POST", "\(serve.server)/v1/customers/mika/offers/sign", headers: ["X-Kakin-Key": serve.publishable],
            json: [
                "bundleId": ServerCommandTests.bundleID, "productId": "com.example.kakin.premium.monthly",
                "kind": "promotional", "offerId": "comeback50", "appAccountToken": token,
            ])
        #expect(signed.status == 200, "\(signed.body)")
        let jws = try #require(signed.body["jws"] as? String)
        func buy(_ signature: String) async throws -> (status: Int, body: [String: Any], raw: Data) {
            try await exchange(
                "POST", "\(serve.sandbox)/v1/device/payments",
                json: [
                    "testerID": "offer", "productID": "com.example.kakin.premium.monthly", "appAccountToken": token,
                    "promotionalOfferID": "comeback50", "promotionalOfferSignature": ["compactJWS": signature],
                ])
        }
        let bought = try await buy(jws)
        let transaction = try #require(
            (bought.body["transaction"] as? [String: Any])?["transaction"] as? [String: Any], "\(bought.body)")
        #expect(transaction["offerIdentifier"] as? String == "comeback50")
        #expect(transaction["price"] as? Int == 2_490, "the offer's price")

        let replayed = try await buy(jws)
        #expect(replayed.body["state"] as? String == "failed")
        #expect((replayed.body["error"] as? [String: Any])?["code"] as? Int == 12, "SKError.invalidSignature")
        let parts = jws.split(separator: ".")
        let tampered = [parts[0], parts[1], parts[2].dropLast(4) + "AAAA"].joined(separator: ".")
        let refused = try await buy(tampered)
        #expect((refused.body["error"] as? [String: Any])?["code"] as? Int == 12)
    }
}
