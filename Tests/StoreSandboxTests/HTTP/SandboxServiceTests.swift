import AppStoreModels
import AppStoreSecurity
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import StoreSandbox
import Testing

@Suite struct SandboxServiceTests {
    func makeService() throws -> SandboxService {
        let catalog = try ExampleApp.catalog()
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: EngineFixture.authority, clock: .manual(at: EngineFixture.start))
        return SandboxService(engine: engine, catalog: catalog, configuration: .init(sharedSecret: "secret"))
    }

    static func json(_ object: Any) -> ByteBuffer {
        ByteBuffer(bytes: try! JSONSerialization.data(withJSONObject: object))
    }

    static func object(_ buffer: ByteBuffer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: buffer))) as? [String: Any] ?? [:]
    }

    @Test func aPurchaseThroughTheDeviceAPI() async throws {
        let service = try makeService()
        let verifier = try service.engine.signer.makeVerifier()
        let app = Application(router: service.router())
        try await app.test(.router) { client in
            let created = try await client.execute(
                uri: "/v1/control/testers", method: .post,
                body: Self.json(["name": "jp@example.com", "storefront": "JPN"]))
            #expect(created.status == .created)
            let tester = try #require(Self.object(created.body)["id"] as? String)

            let products = try await client.execute(
                uri: "/v1/device/products?tester=\(tester)&ids=com.example.kakin.removeAd,com.example.kakin.nope",
                method: .get)
            let productsBody = Self.object(products.body)
            let first = try #require((productsBody["products"] as? [[String: Any]])?.first)
            #expect(first["displayPrice"] as? String == "¥100")
            #expect((productsBody["invalidProductIdentifiers"] as? [[String: Any]])?.count == 1)

            let paid = try await client.execute(
                uri: "/v1/device/payments", method: .post,
                body: Self.json(["testerID": tester, "productID": "com.example.kakin.increasePoints", "quantity": 2]))
            let payment = Self.object(paid.body)
            #expect(payment["state"] as? String == "purchased")
            let jws = try #require((payment["transaction"] as? [String: Any])?["jwsRepresentation"] as? String)
            let transaction = try await verifier.verifyTransaction(jws)
            #expect(transaction.quantity == 2)
            #expect(transaction.currency == "JPY")
            let id = try #require(transaction.transactionID)

            let unfinished = try await client.execute(
                uri: "/v1/device/testers/\(tester)/transactions/unfinished", method: .get)
            #expect((Self.object(unfinished.body)["transactions"] as? [Any])?.count == 1)
            let finished = try await client.execute(
                uri: "/v1/device/testers/\(tester)/transactions/\(id)/finish", method: .post)
            #expect(finished.status == .noContent)
            let after = try await client.execute(
                uri: "/v1/device/testers/\(tester)/transactions/unfinished", method: .get)
            #expect((Self.object(after.body)["transactions"] as? [Any])?.count == 0)

            let receipt = try await client.execute(
                uri: "/v1/device/testers/\(tester)/receipt?device=\(UUID())", method: .get)
            let base64 = try #require(Self.object(receipt.body)["receipt"] as? String)
            let production = try await client.execute(
                uri: "/production/verifyReceipt", method: .post, body: Self.json(["receipt-data": base64]))
            #expect(Self.object(production.body)["status"] as? Int == 21007)
            let sandbox = try await client.execute(
                uri: "/verifyReceipt", method: .post, body: Self.json(["receipt-data": base64]))
            #expect(Self.object(sandbox.body)["status"] as? Int == 0)
        }
    }

    @Test func askToBuyIsApprovedThroughTheControlAPI() async throws {
        let service = try makeService()
        let app = Application(router: service.router())
        try await app.test(.router) { client in
            let created = try await client.execute(
                uri: "/v1/control/testers", method: .post,
                body: Self.json(["name": "kid@example.com", "asksToBuy": true]))
            let tester = try #require(Self.object(created.body)["id"] as? String)
            let paid = try await client.execute(
                uri: "/v1/device/payments", method: .post,
                body: Self.json(["testerID": tester, "productID": "com.example.kakin.removeAd"]))
            let pending = try #require(Self.object(paid.body)["pendingPurchaseID"] as? String)
            #expect(Self.object(paid.body)["state"] as? String == "deferred")
            let approved = try await client.execute(uri: "/v1/control/pending/\(pending)/approve", method: .post)
            #expect(Self.object(approved.body)["state"] as? String == "purchased")
            let entitlements = try await client.execute(uri: "/v1/device/testers/\(tester)/entitlements", method: .get)
            #expect((Self.object(entitlements.body)["transactions"] as? [Any])?.count == 1)
        }
    }

    @Test func subscriptionsRenewWhenTheClockIsAdvanced() async throws {
        let service = try makeService()
        let app = Application(router: service.router())
        try await app.test(.router) { client in
            let created = try await client.execute(
                uri: "/v1/control/testers", method: .post, body: Self.json(["name": "s@example.com"]))
            let tester = try #require(Self.object(created.body)["id"] as? String)
            _ = try await client.execute(
                uri: "/v1/device/payments", method: .post,
                body: Self.json(["testerID": tester, "productID": "com.example.kakin.premium.monthly"]))
            let advanced = try await client.execute(
                uri: "/v1/control/clock", method: .post, body: Self.json(["advanceSeconds": 8 * 86_400]))
            let events = try #require(Self.object(advanced.body)["events"] as? [[String: Any]])
            #expect(events.map { $0["notificationType"] as? String } == ["DID_RENEW"])
        }
    }

    @Test func badRequestsGetTypedErrors() async throws {
        let service = try makeService()
        let app = Application(router: service.router())
        try await app.test(.router) { client in
            let unknown = try await client.execute(uri: "/v1/device/testers/ghost/entitlements", method: .get)
            #expect(unknown.status == .notFound)
            #expect((Self.object(unknown.body)["error"] as? [String: Any])?["code"] as? String == "unknownTester")
            let malformed = try await client.execute(
                uri: "/v1/device/payments", method: .post, body: ByteBuffer(string: "{not json"))
            #expect(malformed.status == .badRequest)
            let storefront = try await client.execute(
                uri: "/v1/control/testers", method: .post, body: Self.json(["name": "x", "storefront": "ATL"]))
            #expect(storefront.status == .notFound)
            let unreadable = try await client.execute(
                uri: "/verifyReceipt", method: .post, body: ByteBuffer(string: "nope"))
            #expect(Self.object(unreadable.body)["status"] as? Int == 21000)
        }
    }
}
