import AppStoreModels
import AppStoreTesting
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import Testing

@testable import KakinCLI
@testable import StoreSandbox

/// `kakin retention` against an embedded sandbox started in-process, reached as `kakin serve`'s
/// data directory names it, and through a server configuration.
@Suite struct RetentionCommandTests {
    static let message = "6f1c2a9e-0b7d-4c4e-9a55-2f3e1d0c9b8a"
    static let monthly = ExampleApp.productID("premium.monthly")

    /// A sandbox serving the Retention Messaging API on a free port, knowing the API key
    /// `kakin serve` made in `data`; `body` gets the arguments that reach it, and the sandbox.
    static func withSandbox(
        _ body: @Sendable (_ reach: [String], _ data: URL, _ sandbox: SandboxService) async throws -> Void
    ) async throws {
        let scratch = try ScratchDirectory()
        let data = scratch.url
        let keys = try ServeEnvironment.loadOrMakeKeys(in: data)
        let apiKey = try ServeEnvironment.loadOrMakeKey(data.appendingPathComponent(ServeEnvironment.Files.apiKey))
        let catalog = try ExampleApp.catalog()
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: SandboxCertificateAuthority.generate(),
            clock: .manual(at: Date(timeIntervalSince1970: 1_800_000_000)))
        let retention = SandboxRetention(
            engine: engine, timing: .stepping(.milliseconds(3)),
            configuration: .init(
                performanceTest: PerformanceTestConfig(
                    maxConcurrentRequests: 2, totalRequests: 4, totalDuration: 60_000, responseTimeThreshold: 700,
                    successRateThreshold: 95)))
        let service = SandboxService(
            engine: engine, catalog: catalog,
            configuration: .init(
                apiKeys: [.init(keyID: keys.apiKeyID, issuerID: keys.apiIssuerID, publicKey: apiKey.publicKey)]),
            retention: retention)
        let app = Application(router: service.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            try await body(["--data", data.path, "--sandbox-port", "\(port)"], data, service)
        }
    }

    @Test func theCommandsParse() throws {
        let upload = try #require(
            try KakinCommand.parseAsRoot([
                "retention", "messages", "upload", "--header", "Stay", "--body", "Half price.", "--image",
                Self.message, "--alt-text", "A flame", "--config", "kakin.json", "--bundle-id", "com.example.kakin",
                "--environment", "sandbox",
            ]) as? RetentionMessagesUploadCommand)
        #expect(upload.message.header == "Stay")
        #expect(upload.connection.bundleID == "com.example.kakin")
        let set = try #require(
            try KakinCommand.parseAsRoot(["retention", "default", "set", Self.monthly, "en-US", Self.message])
                as? RetentionDefaultSetCommand)
        #expect(set.key.locale == "en-US")
        #expect(set.message == Self.message)
        let result = try #require(
            try KakinCommand.parseAsRoot(["retention", "performance-test", "result", "r", "--wait", "--polls", "3"])
                as? RetentionPerformanceResultCommand)
        #expect(result.poll.wait && result.poll.polls == 3)
        #expect(throws: (any Error).self) {
            try KakinCommand.parseAsRoot(["retention", "messages", "list", "--environment", "staging"])
        }
    }

    @Test func messagesAreUploadedListedAndDeleted() async throws {
        try await Self.withSandbox { reach, _, sandbox in
            let uploaded = try await kakin(
                [
                    "retention", "messages", "upload", "--header", "Before you go", "--body",
                    "Half price for three months.",
                    "--id", Self.message,
                ] + reach)
            #expect(uploaded.exitCode == 0, "\(uploaded.standardError)")
            #expect(uploaded.standardOutput == "uploaded message \(Self.message)")
            #expect(await sandbox.retention.message(Self.message)?.header == "Before you go")

            let generated = try await kakin(
                ["retention", "messages", "upload", "--header", "Stay", "--body", "Every feature stays."] + reach)
            #expect(generated.exitCode == 0, "\(generated.standardError)")
            let second = String(generated.standardOutput.dropFirst("uploaded message ".count))
            #expect(UUID(uuidString: second) != nil)

            let listed = try await kakin(["retention", "messages", "list"] + reach)
            #expect(listed.standardOutput == "\(Self.message)  APPROVED\n\(second)  APPROVED")
            let json = try await kakin(["retention", "messages", "list", "--json"] + reach)
            let decoded = try JSONDecoder().decode(GetMessageListResponse.self, from: Data(json.standardOutput.utf8))
            #expect(decoded.messageIdentifiers?.count == 2)

            let deleted = try await kakin(["retention", "messages", "delete", Self.message] + reach)
            #expect(deleted.standardOutput == "deleted message \(Self.message)")
            #expect(try await kakin(["retention", "messages", "list"] + reach).standardOutput == "\(second)  APPROVED")

            // Deleted once: Apple's MessageNotFound, in one line.
            let again = try await kakin(["retention", "messages", "delete", Self.message] + reach)
            #expect(again.exitCode == 1)
            #expect(again.standardError.hasPrefix("error: notFound \(APIErrorCode.messageNotFound.rawValue): "))
            #expect(!again.standardError.contains("\n"))
        }
    }

    @Test func imagesAndMessagesFromAFile() async throws {
        try await Self.withSandbox { reach, data, sandbox in
            let png = data.appendingPathComponent("flame.png")
            try RetentionTesting.png().write(to: png)
            let image = try await kakin(["retention", "images", "upload", png.path, "--size", "full_size"] + reach)
            #expect(image.exitCode == 0, "\(image.standardError)")
            let imageID = String(image.standardOutput.dropFirst("uploaded image ".count))
            #expect(
                try await kakin(["retention", "images", "list"] + reach).standardOutput
                    == "\(imageID)  APPROVED  FULL_SIZE")

            let file = data.appendingPathComponent("message.json")
            try JSONEncoder().encode(
                UploadMessageRequestBody(
                    header: "Stay", body: "Half price.",
                    image: UploadMessageImage(imageIdentifier: imageID, altText: "A flame"),
                    headerPosition: .aboveImage)
            ).write(to: file)
            let uploaded = try await kakin(
                ["retention", "messages", "upload", "--file", file.path, "--id", Self.message] + reach)
            #expect(uploaded.exitCode == 0, "\(uploaded.standardError)")
            #expect(await sandbox.retention.message(Self.message)?.image?.imageIdentifier == imageID)

            let inUse = try await kakin(["retention", "images", "delete", imageID] + reach)
            #expect(inUse.exitCode == 1)
            #expect(
                inUse.standardError.hasPrefix("error: conflict \(APIErrorCode.imageInUse.rawValue): ")
                    || inUse.standardError.contains("\(APIErrorCode.imageInUse.rawValue)"))
        }
    }

    @Test func defaultMessagesAndTheRealtimeURL() async throws {
        try await Self.withSandbox { reach, _, _ in
            _ = try await kakin(
                ["retention", "messages", "upload", "--header", "Stay", "--body", "Half price.", "--id", Self.message]
                    + reach)
            let missing = try await kakin(["retention", "default", "get", Self.monthly, "en-US"] + reach)
            #expect(missing.exitCode == 1)
            #expect(
                missing.standardError.hasPrefix("error: notFound \(APIErrorCode.defaultMessageNotFound.rawValue): "))

            let set = try await kakin(["retention", "default", "set", Self.monthly, "en-US", Self.message] + reach)
            #expect(set.exitCode == 0, "\(set.standardError)")
            #expect(
                try await kakin(["retention", "default", "get", Self.monthly, "en-US"] + reach).standardOutput
                    == Self.message)
            #expect(try await kakin(["retention", "default", "delete", Self.monthly, "en-US"] + reach).exitCode == 0)
            #expect(try await kakin(["retention", "default", "get", Self.monthly, "en-US"] + reach).exitCode == 1)

            let noURL = try await kakin(["retention", "realtime-url", "get"] + reach)
            #expect(noURL.standardError.hasPrefix("error: notFound \(APIErrorCode.realtimeURLNotFound.rawValue): "))
            let url = "https://kakin.example.com/v1/retention/apple"
            #expect(
                try await kakin(["retention", "realtime-url", "set", url] + reach).standardOutput
                    == "the real-time URL is \(url)")
            #expect(try await kakin(["retention", "realtime-url", "get"] + reach).standardOutput == url)
            #expect(try await kakin(["retention", "realtime-url", "delete"] + reach).exitCode == 0)
            #expect(try await kakin(["retention", "realtime-url", "get"] + reach).exitCode == 1)
        }
    }

    @Test func thePerformanceTestStartsAndItsResultIsRead() async throws {
        try await Self.withSandbox { reach, _, sandbox in
            let engine = sandbox.engine
            let tester = try await engine.createTester(name: "perf@example.com")
            guard
                case .purchased(let monthly) = try await engine.purchase(
                    PurchaseRequest(testerID: tester.id, productID: Self.monthly))
            else { throw SandboxError(.invalidRequest, "not purchased") }
            _ = try await kakin(
                ["retention", "messages", "upload", "--header", "Stay", "--body", "Half price.", "--id", Self.message]
                    + reach)
            try await RetentionTesting.withEndpoint(answer: { _ in (200, RetentionTesting.answer(Self.message)) }) {
                endpoint in
                #expect(
                    try await kakin(["retention", "realtime-url", "set", endpoint.absoluteString] + reach).exitCode == 0
                )
                let started = try await kakin(["retention", "performance-test", "start", monthly.originalID] + reach)
                #expect(started.exitCode == 0, "\(started.standardError)")
                #expect(started.standardOutput.contains("4 requests, 2 at a time"))
                let requestID = try #require(
                    started.standardOutput.split(separator: ":").first?.split(separator: " ").last.map(String.init))
                await sandbox.retention.waitForPerformanceTest(requestID)

                let result = try await kakin(["retention", "performance-test", "result", requestID, "--wait"] + reach)
                #expect(result.exitCode == 0, "\(result.standardError)")
                #expect(result.standardOutput.hasPrefix("PASS: 100 % succeeded (95 % needed), 0 pending"))
                #expect(result.standardOutput.contains("target: \(endpoint.absoluteString)"))

                let unknown = try await kakin(["retention", "performance-test", "result", UUID().uuidString] + reach)
                #expect(
                    unknown.standardError.hasPrefix(
                        "error: notFound \(APIErrorCode.performanceTestRunNotFound.rawValue): "))
            }
        }
    }

    @Test func aServerConfigurationReachesTheSameAPI() async throws {
        try await Self.withSandbox { reach, data, _ in
            let keys = try ServeEnvironment.loadOrMakeKeys(in: data)
            let port = reach[3]
            let config = data.appendingPathComponent("kakin.json")
            let object: [String: Any] = [
                "database": "sqlite::memory:", "serverKey": data.appendingPathComponent("server.pem").path,
                "keys": ["publishable": "pk_test_0123456789abcdef", "secret": "sk_test_0123456789abcdef"],
                "apps": [
                    [
                        "bundleId": ExampleApp.bundleID, "appAppleId": ExampleApp.appAppleID,
                        "appStoreServerAPI": [
                            "keyId": keys.apiKeyID, "issuerId": keys.apiIssuerID,
                            "privateKey": data.appendingPathComponent(ServeEnvironment.Files.apiKey).path,
                        ],
                        "endpoints": [
                            "serverAPIProduction": "http://127.0.0.1:\(port)",
                            "serverAPISandbox": "http://127.0.0.1:\(port)",
                        ],
                    ]
                ],
            ]
            try JSONSerialization.data(withJSONObject: object).write(to: config)
            _ = try await kakin(
                ["retention", "messages", "upload", "--header", "Stay", "--body", "Half price.", "--id", Self.message]
                    + reach)
            let listed = try await kakin(["retention", "messages", "list", "--config", config.path])
            #expect(listed.standardOutput == "\(Self.message)  APPROVED", "\(listed.standardError)")
            let other = try await kakin([
                "retention", "messages", "list", "--config", config.path, "--bundle-id", "com.example.none",
            ])
            #expect(other.exitCode == 1)
            #expect(other.standardError.hasPrefix("error: unknownApp: the configuration has no app com.example.none"))

            let rules = try await kakin(["retention", "preview", "404", "--config", config.path])
            #expect(rules.exitCode == 0, "\(rules.standardError)")
            #expect(rules.standardOutput.hasPrefix("the ledger knows no subscription 404 of \(ExampleApp.bundleID)"))
        }
    }

    @Test func aMessageIsPreviewedAsTheCancelPageShowsIt() async throws {
        let preview = try await kakin(
            "retention", "preview", "--header", "Before you go", "--body", String(repeating: "b", count: 150),
            "--image",
            Self.message, "--alt-text", "A flame")
        #expect(preview.exitCode == 0, "\(preview.standardError)")
        #expect(
            preview.standardOutput == """
                [image: A flame]
                Before you go
                \(String(repeating: "b", count: 150))
                ! the body has 150 characters; Apple allows 144
                """)
        let nothing = try await kakin("retention", "preview")
        #expect(nothing.exitCode == 1)
        let noData = try await kakin("retention", "messages", "list", "--data", "/nonexistent/kakin-data")
        #expect(
            noData.standardError.hasPrefix(
                "error: invalidConfiguration: /nonexistent/kakin-data/keys.json cannot be read"))
    }
}
