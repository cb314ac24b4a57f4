import AppStoreModels
import Crypto
import Foundation
import KakinServer
import KakinTestSupport
import Testing

@testable import KakinCLI

/// Retention Messaging through `kakin serve`: the embedded sandbox asks the server's own
/// `Get Retention Message` endpoint, and the server answers from its ledger and the rules of the
/// configuration file.
@Suite struct ServeRetentionTests {
    static let stayMessage = "0d9c3d1e-5a8e-4f9b-8a61-7c2e4b5d6f70"
    static let defaultMessage = "7b6a5c4d-3e2f-4a1b-9c8d-0e1f2a3b4c5d"
    static let rules = """
        {"retention": {"rules": [
          {"name": "trial-stays", "states": ["trial"], "message": "\(stayMessage)"}
        ]}}
        """

    @Test func theSandboxAsksTheServersOwnEndpointAndTheRulesComeFromTheConfigurationFile() async throws {
        let scratch = try ScratchDirectory()
        let file = try scratch.write(Self.rules, to: "serve.json")
        let command = try #require(
            try KakinCommand.parseAsRoot([
                "serve", "--data", scratch.path("data"), "--port", "9123", "--config", file,
                "--catalog", ServeRevocationTests.examples.appendingPathComponent("Kakin.storekit").path,
                "--grants", ServeRevocationTests.examples.appendingPathComponent("Kakin.grants.json").path,
                "--retention-test-requests", "40", "--retention-test-concurrency", "4",
            ]) as? ServeCommand)
        let options = try command.resolvedOptions(environment: [:])
        #expect(options.retention?.rules.map(\.name) == ["trial-stays"])
        let environment = try await ServeEnvironment.make(options)
        #expect(environment.server.apps.first?.retention?.rules.map(\.name) == ["trial-stays"])
        #expect(
            await environment.sandbox.retention.realtimeURL()?.absoluteString
                == "http://127.0.0.1:9123/v1/retention/apple")
        let test = environment.sandbox.retention.configuration.performanceTest
        #expect(test.totalRequests == 40 && test.maxConcurrentRequests == 4 && test.responseTimeThreshold == 700)

        let bad = try scratch.write(#"{"retention": {"rules": [{"name": "x"}]}}"#, to: "bad.json")
        let refused = #expect(throws: (any Error).self) {
            try KakinCommand.parseAsRoot(["serve", "--config", bad, "--data", scratch.path("data")])
        }
        let message = refused.map { KakinCommand.message(for: $0) } ?? ""
        #expect(message.contains("retention.rules[0]"), "\(message)")
    }

    /// From a tester opening the cancel page to the message the App Store shows, through the
    /// `kakin serve` process: a subscriber in a free trial gets the rule's message; one the ledger
    /// does not know gets the default message of the product and locale.
    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func aTesterOpeningTheCancelPageSeesTheMessageTheServerChose() async throws {
        let scratch = try ScratchDirectory()
        let data = scratch.path("data")
        let file = try scratch.write(Self.rules, to: "serve.json")
        let serve = try await ServeRevocationTests.Serve(data: data, arguments: ["--config", file])
        defer { _ = serve.process.stop() }

        // The operator uploads the messages and a default, as to Apple, with the served API key.
        let client = try Self.client(data: data, sandbox: serve.sandbox)
        for (id, header) in [(Self.stayMessage, "Stay a while"), (Self.defaultMessage, "Before you go")] {
            try await client.uploadMessage(
                try #require(UUID(uuidString: id)), UploadMessageRequestBody(header: header, body: "Everything stays."),
                environment: .sandbox)
        }
        try await client.configureDefaultMessage(
            productID: "com.example.kakin.premium.monthly", locale: "en-US",
            messageIdentifier: try #require(UUID(uuidString: Self.defaultMessage)), environment: .sandbox)

        // A subscriber in a free trial whose purchase reached the server, and one whose did not.
        let known = try await Self.subscribe(serve, tester: "trial")
        #expect(try await serve.upload(known.jws, for: "subscriber").status == 200)
        let unknown = try await Self.subscribe(serve, tester: "stranger")

        let shown = try await kakin("sandbox", "cancel-page", known.original, "--url", serve.sandbox)
        #expect(shown.exitCode == 0, "\(shown.standardError)")
        let record = try #require(
            try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any])
        #expect(record["url"] as? String == "\(serve.server)/v1/retention/apple")
        #expect(record["status"] as? Int == 200, "\(record)")
        #expect(record["answeredInTime"] as? Bool == true, "\(record)")
        #expect(record["shownMessageIdentifier"] as? String == Self.stayMessage, "\(record)")

        let fallback = try await kakin("sandbox", "cancel-page", unknown.original, "--url", serve.sandbox)
        #expect(fallback.exitCode == 0, "\(fallback.standardError)")
        let other = try #require(
            try JSONSerialization.jsonObject(with: Data(fallback.standardOutput.utf8)) as? [String: Any])
        #expect(other["status"] as? Int == 200, "\(other)")
        #expect(other["shownMessageIdentifier"] as? String == Self.defaultMessage, "\(other)")
        #expect(other["shownDefault"] as? Bool == true, "\(other)")
    }

    /// A monthly subscription with a free trial bought by a new tester: its signed transaction and
    /// original transaction ID.
    static func subscribe(
        _ serve: ServeRevocationTests.Serve, tester: String
    ) async throws -> (jws: String, original: String) {
        let added = try await exchange("POST", "\(serve.sandbox)/v1/control/testers", json: ["name": tester, "id": tester])
        #expect(added.status == 200 || added.status == 201, "\(added.body)")
        let payment = try await exchange(
            "POST", "\(serve.sandbox)/v1/device/payments",
            json: ["testerID": tester, "productID": "com.example.kakin.premium.monthly"])
        let transaction = try #require(payment.body["transaction"] as? [String: Any], "\(payment.body)")
        let payload = try #require(transaction["transaction"] as? [String: Any], "\(transaction)")
        return (
            try #require(transaction["jwsRepresentation"] as? String),
            try #require(payload["originalTransactionId"] as? String)
        )
    }

    /// The Retention Messaging API of the served sandbox, with the API key `kakin serve` made.
    static func client(data: String, sandbox: String) throws -> RetentionMessagingAPIClient {
        let directory = URL(fileURLWithPath: data)
        let keys = try JSONDecoder().decode(
            ServeEnvironment.Keys.self,
            from: Data(contentsOf: directory.appendingPathComponent(ServeEnvironment.Files.keys)))
        let key = try P256.Signing.PrivateKey(
            pemRepresentation: String(
                contentsOf: directory.appendingPathComponent(ServeEnvironment.Files.apiKey), encoding: .utf8))
        let access = ServerAPIAccess(
            baseURL: try #require(URL(string: sandbox)), keyID: keys.apiKeyID, issuerID: keys.apiIssuerID, privateKey: key)
        return RetentionMessagingAPIClient(
            access: access, exchange: URLSessionExchange(), bundleID: ServerCommandTests.bundleID)
    }
}
