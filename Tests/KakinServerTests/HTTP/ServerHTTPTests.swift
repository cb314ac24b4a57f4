import AppStoreModels
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinServer
import KakinLedger
import KakinTestSupport
import StoreSandbox
import Testing

@Suite struct ServerHTTPTests {
    static func json(_ object: Any) -> ByteBuffer {
        ByteBuffer(bytes: try! JSONSerialization.data(withJSONObject: object))
    }
    static func object(_ buffer: ByteBuffer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: buffer))) as? [String: Any] ?? [:]
    }

    @Test func purchaseUploadSignedCustomerAndKeys() async throws {
        let fixture = try await ServerFixture()
        let (_, jws) = try await fixture.buy("removeAd")
        try await Application(router: fixture.http.router()).test(.router) { client in
            let body = Self.json(["bundleId": ServerFixture.bundleID, "appUserId": "user-1", "signedTransaction": jws])
            let noKey = try await client.execute(uri: "/v1/transactions", method: .post, body: body)
            #expect(noKey.status == .unauthorized)
            #expect((Self.object(noKey.body)["error"] as? [String: Any])?["code"] as? String == "unauthorized")

            let posted = try await client.execute(
                uri: "/v1/transactions?nonce=abc", method: .post, headers: [HTTPField.Name("X-Kakin-Key")!: "pk_test"],
                body: body)
            #expect(posted.status == .ok)
            let signature = try #require(posted.headers[HTTPField.Name("X-Kakin-Signature")!])
            let raw = try #require(Data(base64Encoded: signature))
            #expect(
                fixture.serverKey.publicKey.isValidSignature(
                    try P256.Signing.ECDSASignature(rawRepresentation: raw), for: Data(buffer: posted.body)))
            let answer = Self.object(posted.body)
            #expect(answer["nonce"] as? String == "abc")
            let entitlements = (answer["customer"] as? [String: Any])?["entitlements"] as? [[String: Any]]
            #expect(entitlements?.first?["identifier"] as? String == "removeAds")

            let customer = try await client.execute(
                uri: "/v1/customers/user-1?bundleId=\(ServerFixture.bundleID)&nonce=n2", method: .get,
                headers: [HTTPField.Name("X-Kakin-Key")!: "pk_test"])
            #expect(Self.object(customer.body)["nonce"] as? String == "n2")

            let key = try await client.execute(uri: "/v1/server-key", method: .get)
            #expect(String(buffer: key.body).contains("BEGIN PUBLIC KEY"))
            let openapi = try await client.execute(uri: "/openapi.yaml", method: .get)
            #expect(String(buffer: openapi.body).hasPrefix("openapi: 3.1.0"))
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            #expect(
                String(buffer: metrics.body).contains(
                    "kakin_http_requests_total{route=\"/v1/transactions\",method=\"POST\",status=\"200\"} 1"))
        }
        try await fixture.store.shutdown()
    }

    @Test func badRequestsAnswerTypedErrorsAndChangeNothing() async throws {
        let fixture = try await ServerFixture()
        let (_, jws) = try await fixture.buy("increasePoints")
        let headers: HTTPFields = [HTTPField.Name("X-Kakin-Key")!: "pk_test"]
        try await Application(router: fixture.http.router()).test(.router) { client in
            let tampered = try await client.execute(
                uri: "/v1/transactions", method: .post, headers: headers,
                body: Self.json(["bundleId": ServerFixture.bundleID, "appUserId": "u", "signedTransaction": jws + "x"]))
            #expect(tampered.status == .unprocessableContent)
            #expect((Self.object(tampered.body)["error"] as? [String: Any])?["code"] as? String == "verificationFailed")
            let malformed = try await client.execute(
                uri: "/v1/transactions", method: .post, headers: headers, body: ByteBuffer(string: "{"))
            #expect(malformed.status == .badRequest)
            let huge = try await client.execute(
                uri: "/v1/transactions", method: .post, headers: headers,
                body: ByteBuffer(string: String(repeating: "x", count: 300 * 1024)))
            #expect(huge.status == .contentTooLarge)
            let spendWithPublicKey = try await client.execute(
                uri: "/v1/customers/u/balances/points/spend", method: .post, headers: headers,
                body: Self.json(["bundleId": ServerFixture.bundleID, "amount": 1, "idempotencyKey": "k"]))
            #expect(spendWithPublicKey.status == .unauthorized)
            let notification = try await client.execute(
                uri: "/v1/notifications/apple", method: .post, body: Self.json(["signedPayload": "not.a.jws"]))
            #expect(notification.status == .unprocessableContent)
        }
        let customer = try await fixture.service.customer(bundleID: ServerFixture.bundleID, appUserID: "u")
        #expect(customer.transactions.isEmpty)
        try await fixture.store.shutdown()
    }

    @Test func spendAndHostedContent() async throws {
        let fixture = try await ServerFixture()
        let (_, points) = try await fixture.buy("increasePoints")
        let (_, sound) = try await fixture.buy("soundPack")
        _ = try await fixture.service.submitTransaction(points, bundleID: ServerFixture.bundleID, appUserID: "user-1")
        _ = try await fixture.service.submitTransaction(sound, bundleID: ServerFixture.bundleID, appUserID: "user-1")
        let secret: HTTPFields = [.authorization: "Bearer sk_test"]
        let appKey: HTTPFields = [HTTPField.Name("X-Kakin-Key")!: "pk_test"]
        try await Application(router: fixture.http.router()).test(.router) { client in
            let spend = Self.json(["bundleId": ServerFixture.bundleID, "amount": 40, "idempotencyKey": "order-1"])
            let first = try await client.execute(
                uri: "/v1/customers/user-1/balances/points/spend", method: .post, headers: secret, body: spend)
            #expect(Self.object(first.body)["balance"] as? Int == 60)
            let again = try await client.execute(
                uri: "/v1/customers/user-1/balances/points/spend", method: .post, headers: secret, body: spend)
            #expect(Self.object(again.body)["status"] as? String == "alreadySpent")
            let tooMuch = try await client.execute(
                uri: "/v1/customers/user-1/balances/points/spend", method: .post, headers: secret,
                body: Self.json(["bundleId": ServerFixture.bundleID, "amount": 61, "idempotencyKey": "order-2"]))
            #expect(tooMuch.status == .unprocessableContent)

            let package = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
            let upload = try await client.execute(
                uri: "/v1/content/com.example.kakin.soundPack?bundleId=\(ServerFixture.bundleID)&version=1.0",
                method: .put,
                headers: secret, body: ByteBuffer(bytes: package))
            #expect(upload.status == .created)
            let uri = "/v1/content/com.example.kakin.soundPack?bundleId=\(ServerFixture.bundleID)&appUserId=user-1"
            let part = try await client.execute(uri: uri, method: .get, headers: appKey + [.range: "bytes=0-999"])
            #expect(part.status == .partialContent)
            #expect(Data(buffer: part.body) == package.prefix(1000))
            let rest = try await client.execute(uri: uri, method: .get, headers: appKey + [.range: "bytes=1000-"])
            #expect(Data(buffer: part.body) + Data(buffer: rest.body) == package)
            let stranger = try await client.execute(
                uri: "/v1/content/com.example.kakin.soundPack?bundleId=\(ServerFixture.bundleID)&appUserId=user-2",
                method: .get, headers: appKey)
            #expect(stranger.status == .forbidden)
        }
        try await fixture.store.shutdown()
    }

    @Test func aWithdrawnConsentWithholdsHostedContent() async throws {
        let fixture = try await ServerFixture()
        let (_, sound) = try await fixture.buy("soundPack", tester: "kid")
        _ = try await fixture.service.submitTransaction(sound, bundleID: ServerFixture.bundleID, appUserID: "kid-1")
        try await fixture.service.linkAppTransaction(
            try await fixture.engine.signedAppTransaction(for: "kid"), bundleID: ServerFixture.bundleID,
            appUserID: "kid-1")
        let secret: HTTPFields = [.authorization: "Bearer sk_test"]
        try await Application(router: fixture.http.router()).test(.router) { client in
            let upload = try await client.execute(
                uri: "/v1/content/com.example.kakin.soundPack?bundleId=\(ServerFixture.bundleID)&version=1.0",
                method: .put, headers: secret, body: ByteBuffer(bytes: [1, 2, 3]))
            #expect(upload.status == .created)
            let uri = "/v1/content/com.example.kakin.soundPack?bundleId=\(ServerFixture.bundleID)&appUserId=kid-1"
            let appKey: HTTPFields = [HTTPField.Name("X-Kakin-Key")!: "pk_test"]
            #expect(try await client.execute(uri: uri, method: .get, headers: appKey).status == .ok)

            fixture.clock.advance(by: 60)
            _ = try await fixture.engine.rescindConsent(of: "kid")
            let rescinded = try #require(await fixture.engine.events().last)
            _ = try await fixture.service.receiveNotification(try await fixture.engine.signedNotification(for: rescinded))
            let withheld = try await client.execute(uri: uri, method: .get, headers: appKey)
            #expect(withheld.status == .forbidden)
            #expect(String(buffer: withheld.body).contains("consentRescinded"))
        }
        try await fixture.store.shutdown()
    }

    @Test("content is uploaded only for a product of the catalog that carries content; nothing else is stored")
    func contentOnlyForCatalogProductsWithContent() async throws {
        let fixture = try await ServerFixture()
        let secret: HTTPFields = [.authorization: "Bearer sk_test"]
        let package = ByteBuffer(bytes: [1, 2, 3])
        try await Application(router: fixture.http.router()).test(.router) { client in
            for (product, status) in [
                ("..%2F..%2Ftmp%2Fpwn", HTTPResponse.Status.badRequest), ("a%2Fb", .badRequest), ("caf%C3%A9", .badRequest),
                ("with%20space", .badRequest), (String(repeating: "a", count: 256), .badRequest),
                ("com.example.kakin.unknown", .notFound), ("com.example.kakin.increasePoints", .notFound),
                ("com.example.kakin.soundPack", .created),
            ] {
                let upload = try await client.execute(
                    uri: "/v1/content/\(product)?bundleId=\(ServerFixture.bundleID)&version=1", method: .put,
                    headers: secret, body: package)
                #expect(upload.status == status, "\(product)")
                let download = try await client.execute(
                    uri: "/v1/content/\(product)?bundleId=\(ServerFixture.bundleID)&appUserId=user-1", method: .get,
                    headers: [HTTPField.Name("X-Kakin-Key")!: "pk_test"])
                #expect(download.status == (status == .created ? .forbidden : status), "\(product)")
            }
        }
        for product in ["../../tmp/pwn", "com.example.kakin.unknown", "com.example.kakin.increasePoints"] {
            #expect(try await fixture.store.latestContent(bundleID: ServerFixture.bundleID, productID: product) == nil)
        }
        #expect(try await fixture.store.latestContent(bundleID: ServerFixture.bundleID, productID: "com.example.kakin.soundPack") != nil)
        try await fixture.store.shutdown()
    }
}

extension HTTPFields {
    static func + (lhs: HTTPFields, rhs: HTTPFields) -> HTTPFields {
        var result = lhs
        result.append(contentsOf: rhs)
        return result
    }
}

extension ServerHTTPTests {
    @Test func theCatalogIsServedWithGrants() async throws {
        let fixture = try await ServerFixture()
        let configuration = try StoreKitConfiguration.load(
            from: Data(contentsOf: ServerFixture.catalogFile.appendingPathComponent("Kakin.storekit")))
        let http = KakinServerHTTP(service: fixture.service, signingKey: fixture.serverKey, catalog: configuration)
        try await Application(router: http.router()).test(.router) { client in
            let response = try await client.execute(
                uri: "/v1/catalog?bundleId=\(ServerFixture.bundleID)&locale=ja_JP", method: .get,
                headers: [HTTPField.Name("X-Kakin-Key")!: "pk_test"])
            let products = try #require(Self.object(response.body)["products"] as? [[String: Any]])
            #expect(products.count == 9)
            let points = try #require(
                products.first { $0["productId"] as? String == "com.example.kakin.increasePoints" })
            #expect((points["grants"] as? [[String: Any]])?.first?["amount"] as? Int == 100)
            let removeAd = try #require(products.first { $0["productId"] as? String == "com.example.kakin.removeAd" })
            #expect(removeAd["displayName"] as? String == "広告削除")
            let monthly = try #require(
                products.first { $0["productId"] as? String == "com.example.kakin.premium.monthly" })
            #expect(monthly["subscriptionPeriod"] as? String == "P1M")
        }
        try await fixture.store.shutdown()
    }
}
