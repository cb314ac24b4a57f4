import AppStoreModels
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinLedger
import KakinServer
import KakinTestSupport
import Testing

/// Each answer to the App Store's `Get Retention Message` requests is recorded once, counted, and
/// read back by message with whether the subscriber stayed.
@Suite("Retention messages: each answer recorded, and who stayed")
struct RetentionDecisionTests {
    static let day: TimeInterval = 86_400

    @Test(
        "answering records the decision once per request, counts it, and the saves read who stayed",
        arguments: StoreKind.backends)
    func recordedAndRead(_ kind: StoreKind) async throws {
        try await withLedgerStore(kind) { store in
            let fixture = try await ServerFixture(store: store)
            let metrics = ServerMetrics()
            var app = ExampleApp.configuration(root: ServerFixture.authority.root)
            app.retention = RetentionPolicy(rules: [
                RetentionRule(name: "trial", states: [.trial], answer: .message(messageID: "trial-message"))
            ])
            let service = PurchaseService(
                store: store, apps: [app], grants: try ExampleApp.grants(), now: { fixture.clock.now() },
                metrics: metrics)
            // A free week, then a paid month.
            let (purchase, jws) = try await fixture.buy("premium.monthly", tester: "alice")
            _ = try await service.submitTransaction(jws, bundleID: ExampleApp.bundleID, appUserID: "alice")
            _ = try await service.submitTransaction(jws, bundleID: ExampleApp.bundleID, appUserID: "alice")
            #expect(
                try await store.retentionDecisions(
                    bundleID: ExampleApp.bundleID, environment: .sandbox, limit: 10, after: nil,
                    now: fixture.clock.now()
                ).isEmpty, "an upload and a duplicate record no decision")

            let request = try RetentionAnswerTests.request(fixture, originalTransactionID: purchase.originalID)
            #expect(try await service.answerRetentionRequest(request).rule?.name == "trial")
            // Apple sends the same request again: answered again, recorded once.
            #expect(try await service.answerRetentionRequest(request).rule?.name == "trial")
            _ = try await service.answerRetentionRequest(
                try RetentionAnswerTests.request(fixture, originalTransactionID: "404"))

            let decisions = try await store.retentionDecisions(
                bundleID: ExampleApp.bundleID, environment: .sandbox, limit: 10, after: nil, now: fixture.clock.now())
            #expect(decisions.count == 2)
            let alices = try #require(decisions.first { $0.decision.originalTransactionID == purchase.originalID })
            let original = try #require(try await store.transaction(id: purchase.originalID))
            #expect(alices.appUserID == "alice")
            #expect(alices.outcome == .pending)
            #expect(alices.decision.subscriberState == "trial")
            #expect(alices.decision.ruleName == "trial")
            #expect(alices.decision.choice == .message && alices.decision.messageID == "trial-message")
            #expect(alices.decision.productID == RetentionAnswerTests.monthly && alices.decision.locale == "en-US")
            #expect(alices.decision.periodExpiresAt == original.expiresDate)
            #expect(alices.decision.decidedAt == fixture.clock.now())
            let unknown = try #require(decisions.first { $0.decision.originalTransactionID == "404" })
            #expect(unknown.decision.subscriberState == nil && unknown.decision.choice == .none)
            #expect(unknown.decision.ruleName == nil && unknown.decision.periodExpiresAt == nil)

            let counted = metrics.render().split(separator: "\n").filter {
                $0.hasPrefix("kakin_retention_answers_total{")
            }
            #expect(counted.contains { $0.contains(#"message="trial-message""#) && $0.hasSuffix(" 2") })
            #expect(counted.contains { $0.contains(#"message="default""#) && $0.hasSuffix(" 1") })

            // The trial converts: its first paid month, a transaction after the decision, is a stay.
            try await fixture.engine.advanceClock(by: 10 * Self.day)
            for record in try await fixture.engine.queueNotifications() {
                _ = try await service.receiveNotification(ResponseBodyV2(signedPayload: record.signedPayload))
            }
            let http = KakinServerHTTP(service: service, signingKey: fixture.serverKey)
            try await Application(router: http.router()).test(.router) { client in
                let range =
                    "bundleId=\(ExampleApp.bundleID)&environment=Sandbox"
                    + "&from=\(MetricsEndpointTests.date(0))&to=\(MetricsEndpointTests.date(10 * Self.day))"
                let answered = try await client.execute(
                    uri: "/v1/retention/saves?\(range)", method: .get, headers: MetricsEndpointTests.secret)
                #expect(answered.status == .ok)
                let saves = try JSONDecoder().decode(RetentionSavesAnswer.self, from: Data(buffer: answered.body))
                #expect(saves.environment == "Sandbox")
                #expect(saves.messages.map(\.messageID) == ["default", "trial-message"])
                #expect(saves.messages.map(\.stayed) == [0, 1])
                #expect(saves.messages.map(\.pending) == [1, 0])
                #expect(saves.messages.map(\.saveRate) == [nil, 1])
                let refused = try await client.execute(
                    uri: "/v1/retention/saves?\(range)", method: .get, headers: [.authorization: "Bearer pk_test"])
                #expect(refused.status != .ok, "the secret key only")
            }
        }
    }
}
