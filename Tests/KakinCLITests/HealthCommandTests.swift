import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import Testing

@testable import KakinCLI

/// `kakin health`, the container image's health check, against a live listener whose `/ready`
/// answers as a server's does.
@Suite struct HealthCommandTests {
    /// A listener on a free port: `/ready` answers 200, `/down` a server's 503 error body.
    func withListener(_ body: @Sendable (String) async throws -> Void) async throws {
        let router = Router()
        router.get("ready") { _, _ in "ready\n" }
        router.get("down") { _, _ in
            Response(
                status: .serviceUnavailable, headers: [.contentType: "application/json"],
                body: .init(
                    byteBuffer: ByteBuffer(
                        string: #"{"error":{"code":"storageUnavailable","message":"the ledger is not reachable","#
                            + #""retryable":true,"cause":"ledgerUnreachable"}}"#)))
        }
        try await Application(router: router).test(.live) { client in
            try await body("http://127.0.0.1:\(try #require(client.port))")
        }
    }

    @Test func aReadyServerIsHealthyAndOneThatIsNotExitsOne() async throws {
        try await withListener { base in
            let healthy = try await kakin("health", "--url", "\(base)/ready")
            #expect(healthy.exitCode == 0, "\(healthy.standardError)")
            #expect(healthy.standardOutput == "healthy: \(base)/ready answered HTTP 200")

            let down = try await kakin("health", "--url", "\(base)/down")
            #expect(down.exitCode == 1)
            let reason = "storageUnavailable (ledgerUnreachable)"
            #expect(down.standardError == "unhealthy: \(base)/down answered HTTP 503: \(reason)")

            let missing = try await kakin("health", "--url", "\(base)/nowhere")
            #expect(missing.exitCode == 1)
            #expect(missing.standardError.hasPrefix("unhealthy: \(base)/nowhere answered HTTP 404"))
        }
    }

    @Test func theEnvironmentNamesTheURLWhenTheFlagDoesNot() async throws {
        try await withListener { base in
            let command = try #require(try KakinCommand.parseAsRoot(["health"]) as? HealthCommand)
            let answer = await command.produceOutput(environment: ["KAKIN_HEALTH_URL": "\(base)/ready"])
            #expect(answer.exitCode == 0, "\(answer.standardError)")
            #expect(answer.standardOutput == "healthy: \(base)/ready answered HTTP 200")

            let flagged = try #require(
                try KakinCommand.parseAsRoot(["health", "--url", "\(base)/down"]) as? HealthCommand)
            let down = await flagged.produceOutput(environment: ["KAKIN_HEALTH_URL": "\(base)/ready"])
            #expect(down.exitCode == 1, "--url comes before the environment")
        }
        let defaulted = try #require(try KakinCommand.parseAsRoot(["health"]) as? HealthCommand)
        #expect(defaulted.url == nil)
        #expect(HealthCommand.defaultURL == "http://127.0.0.1:8080/ready")
    }

    @Test func aClosedPortAndABadURLExitOneWithOneLine() async throws {
        // A port that was free a moment ago: nothing listens on it.
        let socket = try freePort()
        let closed = try await kakin("health", "--url", "http://127.0.0.1:\(socket)/ready", "--timeout", "5")
        #expect(closed.exitCode == 1)
        #expect(closed.standardError.hasPrefix("unhealthy: http://127.0.0.1:\(socket)/ready cannot be reached"))
        #expect(!closed.standardError.contains("\n"))

        let bad = try await kakin("health", "--url", "ftp://127.0.0.1/ready")
        #expect(bad.exitCode == 1)
        #expect(bad.standardError == "error: ftp://127.0.0.1/ready is not an http(s) URL")
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["health", "--timeout", "0"]) }
    }
}
