import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
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

/// What every route does the same way: keys before anything, typed errors, 405, 413, decoded paths.
@Suite struct ServerHTTPHygieneTests {
    static let appKey: HTTPFields = [HTTPField.Name("X-Kakin-Key")!: "pk_test"]
    static let secret: HTTPFields = [.authorization: "Bearer sk_test"]

    static func error(_ response: TestResponse) -> [String: Any] {
        (ServerHTTPTests.object(response.body)["error"] as? [String: Any]) ?? [:]
    }

    @Test func pathParametersArePercentDecoded() async throws {
        let fixture = try await ServerFixture()
        let (_, jws) = try await fixture.buy("removeAd")
        try await fixture.service.submit(jws, bundleID: ServerFixture.bundleID, appUserID: "a b/ç")
        try await Application(router: fixture.http.router()).test(.router) { client in
            let response = try await client.execute(
                uri: "/v1/customers/a%20b%2F%C3%A7?bundleId=\(ServerFixture.bundleID)", method: .get,
                headers: Self.appKey)
            #expect(response.status == .ok)
            let customer = ServerHTTPTests.object(response.body)["customer"] as? [String: Any]
            #expect(customer?["appUserId"] as? String == "a b/ç")
            #expect((customer?["entitlements"] as? [[String: Any]])?.first?["isActive"] as? Bool == true)
        }
        try await fixture.store.shutdown()
    }

    @Test func theKeyIsCheckedBeforeTheBundleIDAndTheBody() async throws {
        let fixture = try await ServerFixture()
        try await Application(router: fixture.http.router()).test(.router) { client in
            // Without a valid key, a known and an unknown bundle ID get the same answer.
            var answers: [String] = []
            for bundle in [ServerFixture.bundleID, "com.unknown.app"] {
                let response = try await client.execute(
                    uri: "/v1/customers/u?bundleId=\(bundle)", method: .get,
                    headers: [HTTPField.Name("X-Kakin-Key")!: "pk_wrong"])
                #expect(response.status == .unauthorized)
                answers.append(String(buffer: response.body))
            }
            #expect(answers[0] == answers[1], "no probing of bundle IDs")
            // A malformed body is not read before the key.
            let body = try await client.execute(
                uri: "/v1/transactions", method: .post, body: ByteBuffer(string: "{not json"))
            #expect(body.status == .unauthorized)
            // With a valid key, an unknown app is named as such.
            let unknown = try await client.execute(
                uri: "/v1/customers/u?bundleId=com.unknown.app", method: .get, headers: Self.appKey)
            #expect(unknown.status == .notFound)
            #expect(Self.error(unknown)["code"] as? String == "unknownApp")
            // The publishable key never opens secret routes.
            let spend = try await client.execute(
                uri: "/v1/customers/u/balances/points/spend", method: .post, headers: Self.appKey,
                body: ServerHTTPTests.json(["bundleId": ServerFixture.bundleID, "amount": 1, "idempotencyKey": "k"]))
            #expect(spend.status == .unauthorized)
        }
        try await fixture.store.shutdown()
    }

    @Test func wrongMethodsAndOversizedBodiesAnswerTheirOwnStatus() async throws {
        let fixture = try await ServerFixture()
        try await Application(router: fixture.http.router()).test(.router) { client in
            let wrong = try await client.execute(uri: "/v1/transactions", method: .get, headers: Self.appKey)
            #expect(wrong.status == .methodNotAllowed)
            #expect(wrong.headers[.allow] == "POST")
            #expect(Self.error(wrong)["code"] as? String == "methodNotAllowed")
            let content = try await client.execute(uri: "/v1/content/x", method: .delete, headers: Self.secret)
            #expect(content.status == .methodNotAllowed)
            #expect(content.headers[.allow] == "PUT, GET")
            let big = try await client.execute(
                uri: "/v1/transactions", method: .post, headers: Self.appKey,
                body: ByteBuffer(string: String(repeating: " ", count: 257 * 1024)))
            #expect(big.status == .contentTooLarge)
            #expect(Self.error(big)["retryable"] as? Bool == false)
            let nowhere = try await client.execute(uri: "/v1/nowhere", method: .get)
            #expect(nowhere.status == .notFound)
        }
        try await fixture.store.shutdown()
    }

    @Test func verificationFailuresCarryTheirCauseAndClientMistakesAreNotRetryable() async throws {
        let fixture = try await ServerFixture()
        let (_, jws) = try await fixture.buy("removeAd")
        let foreign = try SandboxCertificateAuthority.generate(now: ServerFixture.start)
        let forged = try SandboxSigner(
            authority: foreign, bundleID: ServerFixture.bundleID, appAppleID: ExampleApp.appAppleID)
            .signTransaction(
                try #require(await fixture.engine.transactions(of: "tester").first), at: fixture.clock.now())
        var parts = jws.split(separator: ".").map(String.init)
        parts[2] = String(parts[2].reversed())
        let cases: [(String, String)] = [
            (parts.joined(separator: "."), "badSignature"), (forged, "untrustedChain"), ("a.b", "malformedInput"),
        ]
        try await Application(router: fixture.http.router()).test(.router) { client in
            for (signed, cause) in cases {
                let response = try await client.execute(
                    uri: "/v1/transactions", method: .post, headers: Self.appKey,
                    body: ServerHTTPTests.json([
                        "bundleId": ServerFixture.bundleID, "appUserId": "u", "signedTransaction": signed,
                    ]))
                #expect(response.status == .unprocessableContent)
                #expect(Self.error(response)["cause"] as? String == cause)
                #expect(Self.error(response)["retryable"] as? Bool == false)
            }
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(metrics.contains("kakin_verification_failures_total{cause=\"badSignature\"} 1"))
            #expect(metrics.contains("kakin_verification_failures_total{cause=\"untrustedChain\"} 1"))
            #expect(metrics.contains("kakin_http_request_duration_seconds_bucket{route=\"/v1/transactions\""))
        }
        try await fixture.store.shutdown()
    }

    @Test func storageErrorsMapToTheirStatus() {
        #expect(ServerError(LedgerStoreError(.idempotencyKeyReused, "x")).httpStatus == 409)
        #expect(ServerError(LedgerStoreError(.contentVersionConflict, "x")).httpStatus == 409)
        #expect(ServerError(LedgerStoreError(.invalidArgument, "x")).httpStatus == 400)
        #expect(ServerError(LedgerStoreError(.unavailable, "x")).httpStatus == 503)
        #expect(ServerError(LedgerStoreError(.unavailable, "x")).isRetryable)
        for code in [ServerError.Code.invalidRequest, .unauthorized, .verificationFailed, .conflict, .payloadTooLarge] {
            #expect(!ServerError(code, "client mistake").isRetryable)
        }
    }

    @Test func aReusedIdempotencyKeyIsAConflict() async throws {
        let fixture = try await ServerFixture()
        let (_, points) = try await fixture.buy("increasePoints")
        try await fixture.service.submit(points, bundleID: ServerFixture.bundleID, appUserID: "u")
        try await Application(router: fixture.http.router()).test(.router) { client in
            let first = try await client.execute(
                uri: "/v1/customers/u/balances/points/spend", method: .post, headers: Self.secret,
                body: ServerHTTPTests.json(["bundleId": ServerFixture.bundleID, "amount": 10, "idempotencyKey": "k1"]))
            #expect(first.status == .ok)
            let reused = try await client.execute(
                uri: "/v1/customers/u/balances/points/spend", method: .post, headers: Self.secret,
                body: ServerHTTPTests.json(["bundleId": ServerFixture.bundleID, "amount": 20, "idempotencyKey": "k1"]))
            #expect(reused.status == .conflict)
            #expect(Self.error(reused)["retryable"] as? Bool == false)
        }
        try await fixture.store.shutdown()
    }

    @Test func healthAndReadiness() async throws {
        let fixture = try await ServerFixture()
        try await Application(router: fixture.http.router()).test(.router) { client in
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/ready", method: .get).status == .ok)
            try await fixture.store.shutdown()
            let ready = try await client.execute(uri: "/ready", method: .get)
            #expect(ready.status == .serviceUnavailable)
            #expect(Self.error(ready)["retryable"] as? Bool == true)
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok, "alive, though not ready")
        }
    }
}
