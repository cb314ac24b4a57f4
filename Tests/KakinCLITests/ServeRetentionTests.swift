import AppStoreModels
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
          {"name": "trial-stays", "states": ["trial"], "locales": ["en"], "message": "\(stayMessage)"}
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
    /// `kakin serve` process: a subscriber in a free trial gets the rule's message; one in a locale
    /// no rule names gets the default message of the product and locale.
    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func aTesterOpeningTheCancelPageSeesTheMessageTheServerChose() async throws {
        let scratch = try ScratchDirectory()
        let data = scratch.path("data")
        let file = try scratch.write(Self.rules, to: "serve.json")
        let serve = try await ServeRevocationTests.Serve(data: data, arguments: ["--config", file])
        defer { _ = serve.process.stop() }

        // The operator uploads the messages and a default with `kakin retention`, as to Apple.
        let port = try #require(URL(string: serve.sandbox)?.port)
        let connection = ["--data", data, "--sandbox-port", "\(port)"]
        for (id, header) in [(Self.stayMessage, "Stay a while"), (Self.defaultMessage, "Before you go")] {
            let uploaded = try await kakin(
                ["retention", "messages", "upload", "--id", id, "--header", header, "--body", "Everything stays."]
                    + connection)
            #expect(uploaded.exitCode == 0, "\(uploaded.standardError)")
        }
        let defaulted = try await kakin(
            ["retention", "default", "set", "com.example.kakin.premium.monthly", "fr-FR", Self.defaultMessage]
                + connection)
        #expect(defaulted.exitCode == 0, "\(defaulted.standardError)")

        // A subscriber in a free trial whose purchase reached the server, and one in France (whose
        // purchase reaches it only through the sandbox's notification, whenever that arrives).
        let known = try await Self.subscribe(serve, tester: "trial")
        #expect(try await serve.upload(known.jws, for: "subscriber").status == 200)
        let french = try await Self.subscribe(serve, tester: "french")

        let shown = try await kakin("sandbox", "cancel-page", known.original, "--url", serve.sandbox)
        #expect(shown.exitCode == 0, "\(shown.standardError)")
        let record = try #require(
            try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any])
        #expect(record["url"] as? String == "\(serve.server)/v1/retention/apple")
        #expect(record["status"] as? Int == 200, "\(record)")
        #expect(record["answeredInTime"] as? Bool == true, "\(record)")
        #expect(record["shownMessageIdentifier"] as? String == Self.stayMessage, "\(record)")

        let fallback = try await kakin(
            "sandbox", "cancel-page", french.original, "--locale", "fr-FR", "--url", serve.sandbox)
        #expect(fallback.exitCode == 0, "\(fallback.standardError)")
        let other = try #require(
            try JSONSerialization.jsonObject(with: Data(fallback.standardOutput.utf8)) as? [String: Any])
        #expect(other["status"] as? Int == 200, "\(other)")
        #expect(other["shownMessageIdentifier"] as? String == Self.defaultMessage, "\(other)")
        #expect(other["shownDefault"] as? Bool == true, "\(other)")

        // Both answers are recorded: the trial's message is pending until its period ends.
        let keys = try JSONDecoder().decode(
            ServeEnvironment.Keys.self,
            from: Data(contentsOf: URL(fileURLWithPath: data).appendingPathComponent(ServeEnvironment.Files.keys)))
        let saves = try await exchange(
            "GET", "\(serve.server)/v1/retention/saves?bundleId=\(ServerCommandTests.bundleID)&environment=Sandbox",
            headers: ["Authorization": "Bearer \(keys.secretKey)"])
        #expect(saves.status == 200, "\(saves.body)")
        let messages = try #require(saves.body["messages"] as? [[String: Any]], "\(saves.body)")
        let stay = try #require(messages.first { $0["messageId"] as? String == Self.stayMessage }, "\(messages)")
        #expect(stay["shown"] as? Int == 1 && stay["pending"] as? Int == 1, "\(stay)")
        let fallbackSaves = try #require(messages.first { $0["messageId"] as? String == "default" }, "\(messages)")
        #expect(fallbackSaves["shown"] as? Int == 1, "\(fallbackSaves)")
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
}
