import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinCore
import KakinServer
import KakinLedger
import KakinTestSupport
import KakinWire
import Testing

/// `POST /v1/customers/{anonymous user}/alias` over HTTP: the signed answer of the identified
/// customer, the typed refusals, and requests that still name the anonymous customer afterwards.
@Suite struct CustomerAliasHTTPTests {
    private let headers: HTTPFields = [HTTPField.Name("X-Kakin-Key")!: "pk_test"]

    private func alias(
        _ client: some TestClientProtocol, _ anonymous: String, to target: String, nonce: String = "n"
    ) async throws -> (status: HTTPResponse.Status, body: [String: Any], raw: ByteBuffer, signature: String?) {
        let response = try await client.execute(
            uri: "/v1/customers/\(KakinRoute.encode(anonymous))/alias?nonce=\(nonce)", method: .post, headers: headers,
            body: ServerHTTPTests.json(["bundleId": ServerFixture.bundleID, "appUserId": target]))
        return (
            response.status, ServerHTTPTests.object(response.body), response.body,
            response.headers[HTTPField.Name("X-Kakin-Signature")!]
        )
    }

    private func error(_ body: [String: Any]) -> (code: String?, cause: String?) {
        let error = body["error"] as? [String: Any]
        return (error?["code"] as? String, error?["cause"] as? String)
    }

    @Test func anAnonymousCustomerBecomesAnIdentifiedOneOnce() async throws {
        let fixture = try await ServerFixture()
        let (_, removeAd) = try await fixture.buy("removeAd")
        let (_, points) = try await fixture.buy("increasePoints")
        let (_, later) = try await fixture.buy("increasePoints")
        let anonymous = AnonymousAppUserID.make()
        try await Application(router: fixture.http.router()).test(.router) { client in
            for jws in [removeAd, points] {
                let posted = try await client.execute(
                    uri: "/v1/transactions", method: .post, headers: headers,
                    body: ServerHTTPTests.json([
                        "bundleId": ServerFixture.bundleID, "appUserId": anonymous, "signedTransaction": jws,
                    ]))
                #expect(posted.status == .ok)
            }

            let first = try await alias(client, anonymous, to: "kai", nonce: "first")
            #expect(first.status == .ok, "\(first.body)")
            let signature = try #require(first.signature.flatMap { Data(base64Encoded: $0) })
            #expect(
                fixture.serverKey.publicKey.isValidSignature(
                    try P256.Signing.ECDSASignature(rawRepresentation: signature), for: Data(buffer: first.raw)))
            #expect(first.body["nonce"] as? String == "first")
            let customer = try #require(first.body["customer"] as? [String: Any])
            #expect(customer["appUserId"] as? String == "kai")
            #expect((customer["balances"] as? [String: Any])?["points"] as? Int == 100)
            #expect(
                (customer["entitlements"] as? [[String: Any]])?.map { $0["identifier"] as? String } == ["removeAds"])

            // The same call again answers the same customer.
            let again = try await alias(client, anonymous, to: "kai", nonce: "first")
            #expect(again.status == .ok)
            let repeated = try #require(again.body["customer"] as? [String: Any])
            #expect(NSDictionary(dictionary: repeated) == NSDictionary(dictionary: customer))

            // A later upload and a read naming the anonymous customer reach kai.
            let upload = try await client.execute(
                uri: "/v1/transactions", method: .post, headers: headers,
                body: ServerHTTPTests.json([
                    "bundleId": ServerFixture.bundleID, "appUserId": anonymous, "signedTransaction": later,
                ]))
            let uploaded = ServerHTTPTests.object(upload.body)["customer"] as? [String: Any]
            #expect(uploaded?["appUserId"] as? String == "kai")
            #expect((uploaded?["balances"] as? [String: Any])?["points"] as? Int == 200)
            let read = try await client.execute(
                uri: "/v1/customers/\(KakinRoute.encode(anonymous))?bundleId=\(ServerFixture.bundleID)", method: .get,
                headers: headers)
            #expect((ServerHTTPTests.object(read.body)["customer"] as? [String: Any])?["appUserId"] as? String == "kai")

            // Refusals, each typed, none changing anything.
            let elsewhere = try await alias(client, anonymous, to: "lee")
            #expect(elsewhere.status == .conflict)
            #expect(error(elsewhere.body) == ("conflict", "aliasedToAnotherCustomer"))
            let identified = try await alias(client, "kai", to: "lee")
            #expect(identified.status == .badRequest)
            #expect(error(identified.body) == ("invalidRequest", "notAnonymous"))
            let toAnonymous = try await alias(client, AnonymousAppUserID.make(), to: AnonymousAppUserID.make())
            #expect(toAnonymous.status == .badRequest)
            #expect(error(toAnonymous.body) == ("invalidRequest", "anonymousTarget"))
            let empty = try await alias(client, AnonymousAppUserID.make(), to: "")
            #expect(empty.status == .badRequest)
            #expect(error(empty.body).code == "invalidRequest")
        }
        let lee = try await fixture.store.customer(bundleID: ServerFixture.bundleID, appUserID: "lee")
        #expect(lee.transactions.isEmpty && lee.balances.isEmpty)
        try await fixture.store.shutdown()
    }

    @Test("an anonymous ID the server has never seen: the identified customer is answered, and nothing is recorded",
          arguments: StoreKind.backends)
    func anUnseenAnonymousIDRecordsNothing(kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let fixture = try await ServerFixture(store: store)
            let (_, removeAd) = try await fixture.buy("removeAd")
            _ = try await fixture.service.submitTransaction(
                removeAd, bundleID: ServerFixture.bundleID, appUserID: "kai")
            let unseen = AnonymousAppUserID.make()
            try await Application(router: fixture.http.router()).test(.router) { client in
                let answered = try await alias(client, unseen, to: "kai")
                #expect(answered.status == .ok, "\(answered.body)")
                let customer = try #require(answered.body["customer"] as? [String: Any])
                #expect(customer["appUserId"] as? String == "kai")
                let entitlements = customer["entitlements"] as? [[String: Any]]
                #expect(entitlements?.map { $0["identifier"] as? String } == ["removeAds"])
                // Not claimed: another customer's log-in with it is not a conflict, and records nothing either.
                #expect(try await alias(client, unseen, to: "lee").status == .ok)
                // Requests naming it are still the (empty) anonymous customer's.
                let read = try await client.execute(
                    uri: "/v1/customers/\(KakinRoute.encode(unseen))?bundleId=\(ServerFixture.bundleID)", method: .get,
                    headers: headers)
                let named = ServerHTTPTests.object(read.body)["customer"] as? [String: Any]
                #expect(named?["appUserId"] as? String == unseen)
                #expect((named?["entitlements"] as? [[String: Any]])?.isEmpty == true)
            }
            #expect(try await store.aliasedCustomer(bundleID: ServerFixture.bundleID, anonymousID: unseen) == nil)
            let events = try await store.dueEvents(
                endpoint: "https://hooks.example/a", now: fixture.clock.now(), limit: 100)
            #expect(!events.isEmpty, "the purchase's events are there")
            #expect(!events.contains { $0.type == "customer.aliased" })
        }
    }
}
