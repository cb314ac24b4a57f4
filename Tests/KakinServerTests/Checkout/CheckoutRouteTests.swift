import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinHTTP
import KakinTestSupport
import KakinWire
import Testing

@testable import KakinServer

/// The checkout's routes, asked as an attacker would: without the key, with another customer's
/// token, with a forged, stale or borrowed link.
@Suite("Checkout: the routes")
struct CheckoutRouteTests {
    static let key = HTTPField.Name(KakinHeader.publishableKey)!
    static let token = HTTPField.Name(KakinHeader.customerToken)!
    static let host = HTTPField.Name("Host")!
    static let linksURI = "/v1/checkout/\(CheckoutServer.bundleID)/links"

    static func body(user: String = "user-1", product: String = CheckoutServer.unlock, returnURL: String = "myapp://checkout/done")
        -> ByteBuffer
    {
        ByteBuffer(data: JSONBody.encode(CheckoutLinkRequest(appUserId: user, productId: product, returnUrl: returnURL)))
    }

    static func error(_ body: ByteBuffer) -> (code: String?, cause: String?) {
        let object = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any]
        let error = object?["error"] as? [String: Any]
        return (error?["code"] as? String, error?["cause"] as? String)
    }

    /// A link made through the route, as path and query.
    static func link(_ client: some TestClientProtocol, product: String = CheckoutServer.unlock) async throws -> String {
        let answer = try await client.execute(
            uri: linksURI, method: .post, headers: [key: "pk_test", Self.host: "127.0.0.1:8080"], body: body(product: product))
        #expect(answer.status == .ok)
        let link = try JSONDecoder().decode([String: AnyCodable].self, from: Data(buffer: answer.body))
        let text = try #require(link["url"]?.string)
        let url = try #require(URLComponents(string: text))
        #expect(url.scheme == "http")
        // The in-process client names the server `localhost`.
        #expect(url.host == "localhost")
        return url.percentEncodedPath + "?" + (url.percentEncodedQuery ?? "")
    }

    @Test func aLinkNeedsTheAppsKey() async throws {
        let server = try await CheckoutServer()
        try await Application(router: server.http.router()).test(.router) { client in
            let none = try await client.execute(uri: Self.linksURI, method: .post, body: Self.body())
            #expect(none.status == .unauthorized)
            let other = try await client.execute(
                uri: Self.linksURI, method: .post, headers: [Self.key: "pk_test_other_app"], body: Self.body())
            #expect(other.status == .unauthorized)
            let wrong = try await client.execute(
                uri: Self.linksURI, method: .post, headers: [Self.key: "pk_guess"], body: Self.body())
            #expect(wrong.status == .unauthorized)
        }
    }

    @Test func aLinkIsSignedAndLastsFifteenMinutes() async throws {
        let server = try await CheckoutServer()
        try await Application(router: server.http.router()).test(.router) { client in
            let answer = try await client.execute(
                uri: Self.linksURI, method: .post, headers: [Self.key: "pk_test"],
                body: Self.body())
            #expect(answer.status == .ok)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(buffer: answer.body)) as? [String: Any])
            let url = try #require(object["url"] as? String)
            #expect(url.hasPrefix("http://localhost/checkout/com.example.kakin?"))
            #expect(url.contains("signature="))
            #expect(object["expiresAt"] as? Int == Int((ServerFixture.start.timeIntervalSince1970 + 900) * 1000))
        }
    }

    @Test func anAppWithCustomerTokensNeedsTheCustomersOwn() async throws {
        let server = try await CheckoutServer(tokensRequired: true)
        try await Application(router: server.http.router()).test(.router) { client in
            let missing = try await client.execute(
                uri: Self.linksURI, method: .post, headers: [Self.key: "pk_test"], body: Self.body())
            #expect(missing.status == .unauthorized)
            #expect(Self.error(missing.body).cause == "customerTokenMissing")
            let anothers = try await client.execute(
                uri: Self.linksURI, method: .post, headers: [Self.key: "pk_test", Self.token: server.token("user-2")],
                body: Self.body())
            #expect(anothers.status == .unauthorized)
            let own = try await client.execute(
                uri: Self.linksURI, method: .post,
                headers: [Self.key: "pk_test", Self.token: server.token("user-1"), Self.host: "127.0.0.1"], body: Self.body())
            #expect(own.status == .ok)
        }
    }

    @Test(arguments: ["https://evil.example/done", "myapp://checkoutevil", "https://example.com/done.evil.test", "not a url"])
    func aReturnURLOutsideTheAppsIsRefused(returnURL: String) async throws {
        let server = try await CheckoutServer()
        try await Application(router: server.http.router()).test(.router) { client in
            let answer = try await client.execute(
                uri: Self.linksURI, method: .post, headers: [Self.key: "pk_test"], body: Self.body(returnURL: returnURL))
            #expect(answer.status == .badRequest)
            #expect(Self.error(answer.body) == ("invalidRequest", "returnURLNotAllowed"))
        }
    }

    @Test func aProductWithoutAWebPriceIsNotFound() async throws {
        let server = try await CheckoutServer()
        try await Application(router: server.http.router()).test(.router) { client in
            let answer = try await client.execute(
                uri: Self.linksURI, method: .post, headers: [Self.key: "pk_test"],
                body: Self.body(product: "com.example.kakin.soundPack"))
            #expect(answer.status == .notFound)
            #expect(Self.error(answer.body) == ("notFound", "unknownProduct"))
        }
    }

    @Test func aSubscriptionTheCustomerHasIsNotSoldAgain() async throws {
        let server = try await CheckoutServer()
        let (_, jws) = try await server.engine.buy("premium.monthly", at: server.clock.now())
        _ = try await server.service.submit(jws, bundleID: CheckoutServer.bundleID, appUserID: "user-1")
        try await Application(router: server.http.router()).test(.router) { client in
            let answer = try await client.execute(
                uri: Self.linksURI, method: .post, headers: [Self.key: "pk_test"],
                body: Self.body(product: CheckoutServer.monthly))
            #expect(answer.status == .conflict)
            #expect(Self.error(answer.body) == ("conflict", "alreadySubscribed"))
            // Another customer may buy it, and the customer may buy what is not a subscription.
            let other = try await client.execute(
                uri: Self.linksURI, method: .post, headers: [Self.key: "pk_test", Self.host: "127.0.0.1"],
                body: Self.body(user: "user-2", product: CheckoutServer.monthly))
            #expect(other.status == .ok)
            let unlock = try await client.execute(
                uri: Self.linksURI, method: .post, headers: [Self.key: "pk_test", Self.host: "127.0.0.1"], body: Self.body())
            #expect(unlock.status == .ok)
        }
    }

    @Test func thePageOfALinkShowsTheProductAndItsPrice() async throws {
        let server = try await CheckoutServer()
        try await Application(router: server.http.router()).test(.router) { client in
            let link = try await Self.link(client)
            let page = try await client.execute(uri: link, method: .get, headers: [.acceptLanguage: "en-US,en;q=0.8"])
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            let html = String(buffer: page.body)
            #expect(html.contains("$9.99"))
            #expect(html.contains(#"<script src="https://js.stripe.com/v3/"></script>"#))
            #expect(html.contains(#"data-key="pk_test_checkout""#))
            #expect(html.contains(#"data-card-flow="confirm""#))
            let policy = try #require(page.headers[.contentSecurityPolicy])
            #expect(policy.hasPrefix("default-src 'none'; script-src 'sha256-"))
            #expect(policy.contains("https://js.stripe.com"))
            #expect(!policy.contains("unsafe"))
        }
    }

    @Test func aForgedStaleOrBorrowedLinkGetsAnErrorPage() async throws {
        let server = try await CheckoutServer()
        try await Application(router: server.http.router()).test(.router) { client in
            let link = try await Self.link(client)
            // Another customer put in the link.
            let forged = link.replacingOccurrences(of: "appUserId=user-1", with: "appUserId=user-2")
            let forgedPage = try await client.execute(uri: forged, method: .get)
            #expect(forgedPage.status == .forbidden)
            #expect(forgedPage.headers[.contentType] == "text/html; charset=utf-8")
            #expect(String(buffer: forgedPage.body).contains("This link is not valid"))
            // The link of one app opened as another's.
            let borrowed = link.replacingOccurrences(
                of: "/checkout/\(CheckoutServer.bundleID)?", with: "/checkout/\(CheckoutServer.otherBundleID)?")
            #expect(try await client.execute(uri: borrowed, method: .get).status == .forbidden)
            // No signature at all.
            let bare = try await client.execute(uri: "/checkout/\(CheckoutServer.bundleID)?appUserId=x", method: .get)
            #expect(bare.status == .forbidden)
            // Paying with a forged link.
            let query = try #require(URLComponents(string: forged)?.queryItems)
            var fields: [String: String] = [:]
            for item in query { fields[item.name] = item.value }
            let pay = try await client.execute(
                uri: "/checkout/\(CheckoutServer.bundleID)/pay", method: .post,
                body: ByteBuffer(data: try JSONSerialization.data(withJSONObject: fields)))
            #expect(pay.status == .forbidden)
            #expect(Self.error(pay.body) == ("forbidden", "forgedLink"))
            // Fifteen minutes later.
            server.clock.advance(CheckoutLink.lifetime)
            let stale = try await client.execute(uri: link, method: .get)
            #expect(stale.status == .gone)
            #expect(String(buffer: stale.body).contains("This link has expired"))
        }
        // No request reached Stripe but the price reads.
        let stub = try #require(server.service.exchange as? StripePriceStub)
        #expect(stub.requests.allSatisfy { $0.hasPrefix("GET /v1/prices/") })
    }
}

/// Any JSON value, read for its string.
struct AnyCodable: Decodable {
    var string: String?
    init(from decoder: any Decoder) throws {
        string = try? decoder.singleValueContainer().decode(String.self)
    }
}
