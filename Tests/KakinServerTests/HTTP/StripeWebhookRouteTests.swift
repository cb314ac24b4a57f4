import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinLedger
import KakinTestSupport
import Testing

@testable import KakinServer

@Suite("Stripe webhooks: POST /v1/notifications/stripe/{bundleId}")
struct StripeWebhookRouteTests {
    static let secret = "whsec_route0123456789"
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let bundleID = ServerFixture.bundleID

    /// A server whose one app has a test-mode Stripe account (none when `stripe` is false), on an
    /// in-memory SQLite ledger, its clock at ``now``.
    static func server(stripe: Bool = true) async throws -> (PurchaseService, KakinServerHTTP, SQLiteLedger) {
        let store = try SQLiteLedger(path: nil)
        try await store.migrate()
        let service = PurchaseService.example(store: store, root: ServerFixture.authority.root, now: { now }) { app in
            if stripe {
                app.stripe = StripeAccount(
                    secretKey: "sk_test_0123456789", webhookSecrets: ["whsec_old0123456789", secret],
                    products: [.init(productID: "com.example.kakin.premium.monthly", price: "price_monthly")])
            }
        }
        return (service, KakinServerHTTP(service: service, signingKey: .init()), store)
    }

    /// An event's JSON as Stripe sends it (indented, as localstripe and Stripe write it).
    static func event(_ id: String, type: String = "invoice.paid", livemode: Bool = false, created: Int = 1_794_999_990)
        -> Data
    {
        Data(
            """
            {
              "id": "\(id)",
              "object": "event",
              "api_version": "2024-06-20",
              "created": \(created),
              "data": {"object": {"id": "in_\(id)", "object": "invoice", "subscription": "sub_1"}},
              "livemode": \(livemode),
              "type": "\(type)"
            }
            """.utf8)
    }

    static func signed(_ body: Data, secret: String = secret, at time: Date = now) -> HTTPFields {
        [HTTPField.Name("Stripe-Signature")!: StripeSignature.header(for: body, secret: secret, timestamp: time)]
    }

    static func error(_ body: ByteBuffer) -> (code: String?, cause: String?) {
        let object = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any]
        let error = object?["error"] as? [String: Any]
        return (error?["code"] as? String, error?["cause"] as? String)
    }

    @Test func aSignedEventIsRecordedOnceWhole() async throws {
        let (_, http, store) = try await Self.server()
        let body = Self.event("evt_1")
        try await Application(router: http.router()).test(.router) { client in
            let uri = "/v1/notifications/stripe/\(Self.bundleID)"
            let first = try await client.execute(uri: uri, method: .post, headers: Self.signed(body), body: ByteBuffer(data: body))
            #expect(first.status == .ok)
            let answer = try JSONDecoder().decode(PurchaseService.StripeEventReceipt.self, from: Data(buffer: first.body))
            #expect(answer == .init(status: "recorded", eventId: "evt_1", type: "invoice.paid"))
            // Stripe delivers it again, signed again later.
            let again = try await client.execute(
                uri: uri, method: .post, headers: Self.signed(body, at: Self.now.addingTimeInterval(-60)),
                body: ByteBuffer(data: body))
            #expect(again.status == .ok)
            let duplicate = try JSONDecoder().decode(PurchaseService.StripeEventReceipt.self, from: Data(buffer: again.body))
            #expect(duplicate.status == "duplicate")
            // Signed with the secret being rolled out.
            let other = Self.event("evt_2", type: "charge.refunded", created: 1_794_999_980)
            let rolled = try await client.execute(
                uri: uri, method: .post, headers: Self.signed(other, secret: "whsec_old0123456789"),
                body: ByteBuffer(data: other))
            #expect(rolled.status == .ok)
        }
        let recorded = try #require(try await store.stripeEvent(bundleID: Self.bundleID, eventID: "evt_1"))
        #expect(recorded.payload == String(decoding: body, as: UTF8.self))
        #expect(recorded.type == "invoice.paid")
        #expect(recorded.objectID == "in_evt_1")
        #expect(!recorded.livemode)
        #expect(recorded.createdAt == Date(timeIntervalSince1970: 1_794_999_990))
        #expect(recorded.receivedAt == Self.now)
        #expect(recorded.appliedAt == nil)
        // Applied in the order Stripe made them, not the order they came in.
        let toApply = try await store.stripeEventsToApply(bundleID: Self.bundleID, limit: 10)
        #expect(toApply.map(\.eventID) == ["evt_2", "evt_1"])
        try await store.shutdown()
    }

    @Test func whatIsNotSignedByTheAccountOrNotItsEventIsRefusedAndNothingRecorded() async throws {
        let (_, http, store) = try await Self.server()
        let body = Self.event("evt_3")
        var changed = body
        changed[changed.count - 3] = UInt8(ascii: "x")
        let uri = "/v1/notifications/stripe/\(Self.bundleID)"
        let cases: [(String, HTTPFields, Data, HTTPResponse.Status, String)] = [
            ("no signature", [:], body, .unprocessableContent, "verificationFailed"),
            ("another secret", Self.signed(body, secret: "whsec_other0123456789"), body, .unprocessableContent, "verificationFailed"),
            ("signed too long ago", Self.signed(body, at: Self.now.addingTimeInterval(-301)), body, .unprocessableContent, "verificationFailed"),
            ("changed after signing", Self.signed(body), changed, .unprocessableContent, "verificationFailed"),
            ("not an event", Self.signed(Data(#"{"id": "x"}"#.utf8)), Data(#"{"id": "x"}"#.utf8), .badRequest, "invalidRequest"),
            ("a live event", Self.signed(Self.event("evt_4", livemode: true)), Self.event("evt_4", livemode: true), .unprocessableContent, "verificationFailed"),
        ]
        try await Application(router: http.router()).test(.router) { client in
            for (name, headers, sent, status, code) in cases {
                let response = try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(data: sent))
                #expect(response.status == status, "\(name)")
                #expect(Self.error(response.body).code == code, "\(name)")
            }
            let live = try await client.execute(
                uri: uri, method: .post, headers: Self.signed(Self.event("evt_4", livemode: true)),
                body: ByteBuffer(data: Self.event("evt_4", livemode: true)))
            #expect(Self.error(live.body).cause == "wrongEnvironment")
            let unknown = try await client.execute(
                uri: "/v1/notifications/stripe/com.example.other", method: .post, headers: Self.signed(body),
                body: ByteBuffer(data: body))
            #expect(unknown.status == .notFound)
            #expect(Self.error(unknown.body).code == "unknownApp")
            let get = try await client.execute(uri: uri, method: .get)
            #expect(get.status == .methodNotAllowed)
        }
        #expect(try await store.stripeEventsToApply(bundleID: Self.bundleID, limit: 10).isEmpty)
        try await store.shutdown()

        let (_, without, other) = try await Self.server(stripe: false)
        try await Application(router: without.router()).test(.router) { client in
            let response = try await client.execute(uri: uri, method: .post, headers: Self.signed(body), body: ByteBuffer(data: body))
            #expect(response.status == .notFound)
            #expect(Self.error(response.body).code == "notConfigured")
        }
        try await other.shutdown()
    }
}
