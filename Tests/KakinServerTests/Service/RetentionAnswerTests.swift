import AppStoreModels
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinLedger
import KakinServer
import KakinTestSupport
import StoreSandbox
import Testing

@Suite("Retention messages: the rules and the answer to the App Store's request")
struct RetentionAnswerTests {
    static let monthly = ExampleApp.productID("premium.monthly")

    static func subscriber(
        _ state: RetentionSubscriberState = .paid, locale: String = "en-US", tenureDays: Int = 40, refunds: Int = 0,
        lifetimeValue: [String: Int64] = [:]
    ) -> RetentionSubscriber {
        RetentionSubscriber(
            productID: monthly, locale: locale, state: state, tenureDays: tenureDays, refunds: refunds,
            lifetimeValue: lifetimeValue)
    }

    @Test("a rule's locales name a locale or every region of a language, ignoring case")
    func locales() {
        let rule = RetentionRule(name: "en", locales: ["en", "fr-CA"], answer: .message(messageID: "m"))
        #expect(rule.matches(Self.subscriber(locale: "en-US")))
        #expect(rule.matches(Self.subscriber(locale: "EN_gb")))
        #expect(rule.matches(Self.subscriber(locale: "fr-ca")))
        #expect(!rule.matches(Self.subscriber(locale: "fr-FR")))
        #expect(!rule.matches(Self.subscriber(locale: "eng")))
    }

    @Test("every condition a rule names must hold; the first rule that matches is chosen")
    func conditions() {
        let policy = RetentionPolicy(rules: [
            RetentionRule(name: "trial", states: [.trial], answer: .message(messageID: "trial")),
            RetentionRule(
                name: "loyal", states: [.paid], minTenureDays: 180, refunded: false,
                minLifetimeValue: RetentionAmount(currency: "USD", milliunits: 50_000), answer: .promotionalOffer(offerID: "stay", messageID: "loyal")),
            RetentionRule(
                name: "switch", products: [Self.monthly], maxTenureDays: 179,
                answer: .alternateProduct(productID: ExampleApp.productID("premium.yearly"), messageID: "yearly")),
        ])
        #expect(policy.rule(for: Self.subscriber(.trial))?.name == "trial")
        let loyal = Self.subscriber(tenureDays: 400, lifetimeValue: ["USD": 59_940])
        #expect(policy.rule(for: loyal)?.name == "loyal")
        var refunded = loyal
        refunded.refunds = 1
        #expect(policy.rule(for: refunded) == nil, "over the switch rule's tenure, and refunded")
        #expect(policy.rule(for: Self.subscriber(tenureDays: 400, lifetimeValue: ["EUR": 99_000])) == nil)
        #expect(policy.rule(for: Self.subscriber(.billingIssue, tenureDays: 30))?.name == "switch")
        #expect(RetentionPolicy().rule(for: loyal) == nil)
    }

    /// A purchase server whose example app answers retention requests with `policy`, over the
    /// fixture's ledger and sandbox.
    static func service(_ fixture: ServerFixture, policy: RetentionPolicy) throws -> PurchaseService {
        PurchaseService.example(
            store: fixture.store, root: ServerFixture.authority.root, grants: try ExampleApp.grants(),
            now: { fixture.clock.now() }
        ) { app in app.retention = policy }
    }

    /// A `Get Retention Message` request for `originalTransactionID`, signed as the App Store
    /// signs it.
    static func request(
        _ fixture: ServerFixture, originalTransactionID: String, locale: String = "en-US"
    ) throws -> RealtimeRequestBody {
        try request(
            signedBy: fixture.engine, at: fixture.clock.now(), originalTransactionID: originalTransactionID,
            locale: locale)
    }

    /// A `Get Retention Message` request for `originalTransactionID`, signed by `engine` at `date`.
    static func request(
        signedBy engine: SandboxEngine, at date: Date, originalTransactionID: String, locale: String = "en-US"
    ) throws -> RealtimeRequestBody {
        let decoded = DecodedRealtimeRequestBody(
            originalTransactionID: originalTransactionID, productID: monthly, userLocale: locale,
            requestIdentifier: UUID().uuidString)
        return RealtimeRequestBody(signedPayload: try engine.signer.signRealtimeRequest(decoded, at: date))
    }

    @Test("a subscriber the ledger knows is answered by the first rule their state matches, over HTTP without a key")
    func answeredFromTheLedger() async throws {
        let fixture = try await ServerFixture()
        let policy = RetentionPolicy(rules: [
            RetentionRule(name: "french", locales: ["fr"], answer: .message(messageID: "fr-message")),
            RetentionRule(
                name: "switch", states: [.paid, .trial], maxTenureDays: 60,
                answer: .alternateProduct(productID: ExampleApp.productID("premium.yearly"), messageID: "yearly")),
        ])
        let service = try Self.service(fixture, policy: policy)
        let (purchase, jws) = try await fixture.buy("premium.monthly", tester: "alice")
        _ = try await service.submitTransaction(jws, bundleID: ExampleApp.bundleID, appUserID: "alice")

        let choice = try await service.answerRetentionRequest(
            try Self.request(fixture, originalTransactionID: purchase.originalID))
        #expect(choice.rule?.name == "switch")
        #expect(choice.subscriber?.tenureDays == 0)
        #expect(choice.answer.alternateProduct?.productID == ExampleApp.productID("premium.yearly"))
        #expect(choice.answer.choiceCount == 1)
        let french = try await service.answerRetentionRequest(
            try Self.request(fixture, originalTransactionID: purchase.originalID, locale: "fr-FR"))
        #expect(french.answer == RealtimeResponseBody.message("fr-message"))

        // Sixty-one days on, the switch rule no longer matches: no choice, the App Store's default.
        fixture.clock.advance(by: 61 * 86_400)
        let later = try await service.answerRetentionRequest(
            try Self.request(fixture, originalTransactionID: purchase.originalID))
        #expect(later.rule == nil)
        #expect(later.answer.choiceCount == 0)

        let http = KakinServerHTTP(service: service, signingKey: fixture.serverKey)
        try await Application(router: http.router()).test(.router) { client in
            let body = try JSONEncoder().encode(
                try Self.request(fixture, originalTransactionID: purchase.originalID, locale: "fr-CA"))
            let answered = try await client.execute(
                uri: "/v1/retention/apple", method: .post, body: ByteBuffer(data: body))
            #expect(answered.status == .ok)
            let answer = try JSONDecoder().decode(RealtimeResponseBody.self, from: Data(buffer: answered.body))
            #expect(answer == RealtimeResponseBody.message("fr-message"))
        }
        try await fixture.store.shutdown()
    }

    @Test("an unknown subscription gets no choice; a request that fails verification is refused")
    func unknownAndForged() async throws {
        let fixture = try await ServerFixture()
        let service = try Self.service(
            fixture, policy: RetentionPolicy(rules: [RetentionRule(name: "all", answer: .message(messageID: "m"))]))
        let unknown = try await service.answerRetentionRequest(try Self.request(fixture, originalTransactionID: "404"))
        #expect(unknown.subscriber == nil)
        #expect(unknown.answer.choiceCount == 0)

        let signed = try #require(try Self.request(fixture, originalTransactionID: "404").signedPayload)
        var parts = signed.split(separator: ".").map(String.init)
        let forged = DecodedRealtimeRequestBody(
            originalTransactionID: "1", appAppleID: ExampleApp.appAppleID, productID: Self.monthly, environment: .sandbox)
        parts[1] = try JSONEncoder().encode(forged).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        await #expect(throws: ServerError.self) {
            try await service.answerRetentionRequest(RealtimeRequestBody(signedPayload: parts.joined(separator: ".")))
        }
        await #expect(throws: ServerError.self) {
            try await service.answerRetentionRequest(RealtimeRequestBody(signedPayload: nil))
        }
        try await fixture.store.shutdown()
    }

    @Test("apps[].retention is read from the configuration; a rule showing two things is refused")
    func configuration() throws {
        let rules: [[String: Any]] = [
            ["name": "trial", "states": ["trial"], "locales": ["en"], "message": "m1"],
            [
                "name": "loyal", "minTenureDays": 180, "refunded": false,
                "minLifetimeValue": ["currency": "usd", "amount": 50],
                "promotionalOffer": ["offerId": "stay", "message": "m2"],
            ],
        ]
        let app = try Self.app(["retention": ["rules": rules]])
        let policy = try #require(app.retention)
        #expect(policy.rules.map(\.name) == ["trial", "loyal"])
        #expect(policy.rules[0].states == [.trial])
        #expect(policy.rules[1].minLifetimeValue?.currency == "USD")
        #expect(policy.rules[1].minLifetimeValue?.milliunits == 50_000)
        #expect(policy.rules[1].answer == .promotionalOffer(offerID: "stay", messageID: "m2"))
        #expect(throws: ServerError.self) {
            try Self.app(["retention": ["rules": [["name": "two", "message": "m", "alternateProduct": ["productId": "p", "message": "m"]]]]])
        }
        #expect(throws: ServerError.self) {
            try Self.app(["retention": ["rules": [["name": "bad", "states": ["gone"], "message": "m"]]]])
        }
    }

    static func app(_ extra: [String: Any]) throws -> ServerConfiguration.App {
        var app: [String: Any] = ["bundleId": ExampleApp.bundleID, "environments": ["Sandbox"]]
        app.merge(extra) { $1 }
        var object = ServerConfigurationTests.minimal
        object["apps"] = [app]
        let data = try JSONSerialization.data(withJSONObject: object)
        return try #require(try ServerConfiguration.parse(data).apps.first)
    }
}
