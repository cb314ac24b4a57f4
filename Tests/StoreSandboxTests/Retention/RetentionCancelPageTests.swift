import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinTestSupport
import Testing

@testable import StoreSandbox

@Suite("Retention Messaging: a tester opens the cancel page")
struct RetentionCancelPageTests {
    static let chosen = RetentionTesting.answer(RetentionFixture.messageID)

    static func base64URLDecode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    static func base64URLEncode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test func theRequestIsSignedAsNotificationsAreAndVerifiesAndATamperedOneDoesNot() async throws {
        let transport = ScriptedRetentionTransport(.answer(200, Self.chosen))
        let fixture = try await RetentionFixture(transport: transport, timing: .stepping(.milliseconds(5)))
        let record = try await fixture.retention.openCancelPage(
            originalTransactionID: fixture.subscription.originalID, locale: "fr-FR")
        let jws = try #require(await transport.signedPayloads.first)
        #expect(jws == record.signedPayload)

        let verifier = try fixture.engine.signer.makeVerifier()
        let request = try await verifier.verifyRealtimeRequest(jws)
        #expect(request.originalTransactionID == fixture.subscription.originalID)
        #expect(request.productID == RetentionFixture.monthly)
        #expect(request.userLocale == "fr-FR")
        #expect(request.requestIdentifier == record.requestIdentifier)
        #expect(request.environment == .sandbox)
        #expect(request.appAppleID == fixture.engine.signer.appAppleID)
        #expect(request.signedDate == EngineFixture.start)

        // Another product written into the payload, the signature kept: refused.
        let parts = jws.split(separator: ".").map(String.init)
        var payload =
            try JSONSerialization.jsonObject(with: try #require(Self.base64URLDecode(parts[1]))) as? [String: Any]
        payload?["productId"] = ExampleApp.productID("premium.yearly")
        let forged = try JSONSerialization.data(withJSONObject: try #require(payload))
        let tampered = [parts[0], Self.base64URLEncode(forged), parts[2]].joined(separator: ".")
        await #expect(throws: AppStoreSecurityError.self) { try await verifier.verifyRealtimeRequest(tampered) }

        // A request for another app is refused even in the sandbox environment.
        let otherApp = try SignedDataVerifier(
            rootCertificates: [EngineFixture.authority.root], bundleID: ExampleApp.bundleID, appAppleID: 1,
            environment: .sandbox)
        await #expect {
            try await otherApp.verifyRealtimeRequest(jws)
        } throws: { error in (error as? AppStoreSecurityError)?.code == .wrongAppAppleID }
    }

    @Test func aValidAnswerInTimeIsShown() async throws {
        let fixture = try await RetentionFixture(
            transport: ScriptedRetentionTransport(.answer(200, Self.chosen)), timing: .stepping(.milliseconds(5)))
        let record = try await fixture.retention.openCancelPage(originalTransactionID: fixture.subscription.originalID)
        #expect(record.status == 200)
        #expect(record.elapsedMilliseconds == 5)
        #expect(record.answeredInTime)
        #expect(record.failure == nil)
        #expect(record.response == .message(RetentionFixture.messageID))
        #expect(record.shownMessageIdentifier == RetentionFixture.messageID)
        #expect(!record.shownDefault)
        #expect(record.url == RetentionFixture.url.absoluteString)
        #expect(await fixture.retention.requests() == [record])
    }

    @Test func aServerThatNeverAnswersGetsTheDefaultAtTheDeadline() async throws {
        let fixture = try await RetentionFixture(
            transport: ScriptedRetentionTransport(.never), timing: .stepping(.milliseconds(700), deadlineFires: true))
        let record = try await fixture.retention.openCancelPage(originalTransactionID: fixture.subscription.originalID)
        #expect(record.status == nil)
        #expect(record.failure == .timedOut)
        #expect(!record.answeredInTime)
        #expect(record.shownMessageIdentifier == RetentionFixture.defaultID)
        #expect(record.shownDefault)
    }

    @Test func anAnswerLaterThanApplesLimitIsRecordedButNotShown() async throws {
        let fixture = try await RetentionFixture(
            transport: ScriptedRetentionTransport(.answer(200, Self.chosen)), timing: .stepping(.milliseconds(701)))
        let record = try await fixture.retention.openCancelPage(originalTransactionID: fixture.subscription.originalID)
        #expect(record.elapsedMilliseconds == 701)
        #expect(record.response == .message(RetentionFixture.messageID))
        #expect(record.failure == .timedOut)
        #expect(record.shownMessageIdentifier == RetentionFixture.defaultID)
        #expect(record.problem?.contains("later than 700 ms") == true)
    }

    @Test(arguments: [
        (500, Data("{}".utf8), SendAttemptResult.unsuccessfulHTTPResponseCode),
        (200, Data("not json".utf8), .invalidResponse),
        (200, RetentionTesting.answer("11111111-2222-3333-4444-555555555555"), .invalidResponse),
        (
            200,
            Data(
                #"{"message":{"messageIdentifier":"6f1c2a9e-0b7d-4c4e-9a55-2f3e1d0c9b8a"},"alternateProduct":{"messageIdentifier":"6f1c2a9e-0b7d-4c4e-9a55-2f3e1d0c9b8a","productId":"p"}}"#
                    .utf8), .invalidResponse
        ),
        (
            200,
            Data(
                #"{"alternateProduct":{"messageIdentifier":"6f1c2a9e-0b7d-4c4e-9a55-2f3e1d0c9b8a","productId":"p"}}"#
                    .utf8), .invalidResponse
        ),
    ])
    func anAnswerTheAppStoreCannotUseShowsTheDefault(status: Int, body: Data, failure: SendAttemptResult) async throws {
        let fixture = try await RetentionFixture(
            transport: ScriptedRetentionTransport(.answer(status, body)), timing: .stepping(.milliseconds(5)))
        let record = try await fixture.retention.openCancelPage(originalTransactionID: fixture.subscription.originalID)
        #expect(record.failure == failure)
        #expect(record.problem != nil)
        #expect(record.shownMessageIdentifier == RetentionFixture.defaultID)
    }

    @Test func aMessageNotApprovedIsNotShownAndNoURLMeansNoRequest() async throws {
        let transport = ScriptedRetentionTransport(.answer(200, Self.chosen))
        let fixture = try await RetentionFixture(transport: transport, timing: .stepping(.milliseconds(5)))
        #expect(await fixture.retention.setReviewState(message: RetentionFixture.messageID, .rejected))
        let refused = try await fixture.retention.openCancelPage(originalTransactionID: fixture.subscription.originalID)
        #expect(refused.failure == .invalidResponse)
        #expect(refused.shownDefault)

        let quiet = ScriptedRetentionTransport(.answer(200, Self.chosen))
        let unconfigured = try await RetentionFixture(transport: quiet, timing: .stepping(.milliseconds(5)), url: nil)
        let record = try await unconfigured.retention.openCancelPage(
            originalTransactionID: unconfigured.subscription.originalID, locale: "de-DE")
        #expect(record.url == nil)
        #expect(record.status == nil)
        #expect(record.shownMessageIdentifier == nil, "no default in de-DE")
        #expect(await quiet.bodies.isEmpty)
    }

    @Test func onlyASubscriptionHasACancelPage() async throws {
        let fixture = try await RetentionFixture(
            transport: ScriptedRetentionTransport(.fail), timing: .stepping(.milliseconds(5)))
        let tester = try await fixture.engine.createTester(name: "other@example.com")
        let bought = try #require(
            try await fixture.engine.purchase(.init(testerID: tester.id, productID: ExampleApp.productID("removeAd")))
                .transaction)
        await #expect(throws: SandboxError.self) {
            try await fixture.retention.openCancelPage(originalTransactionID: bought.id)
        }
        let failed = try await fixture.retention.openCancelPage(originalTransactionID: fixture.subscription.originalID)
        #expect(failed.failure == .noResponse)
    }
}
