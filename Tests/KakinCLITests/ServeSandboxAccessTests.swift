import ArgumentParser
import Foundation
import Hummingbird
import HummingbirdTesting
import StoreSandbox
import Testing

@testable import KakinCLI

/// `kakin serve` bound to anything but loopback answers the sandbox's device and control APIs to
/// this machine only, or to other hosts with `--sandbox-token`. A peer on another host is played
/// by the router's `isLocal`, which says no.
@Suite struct ServeSandboxAccessTests {
    static let examples = ServerCommandTests.examples
    static let token = "sandbox-token-0123456789"

    static func environment(
        _ scratch: borrowing ScratchDirectory, _ extra: [String], variables: [String: String] = [:]
    )
        async throws -> ServeEnvironment
    {
        let arguments =
            [
                "serve", "--data", scratch.path("data-\(UUID().uuidString)"),
                "--catalog", examples.appendingPathComponent("Kakin.storekit").path,
                "--grants", examples.appendingPathComponent("Kakin.grants.json").path,
            ] + extra
        let command = try #require(try KakinCommand.parseAsRoot(arguments) as? ServeCommand)
        return try await ServeEnvironment.make(try command.resolvedOptions(environment: variables))
    }

    /// The status of `POST /v1/control/testers` from another host, with `authorization` if given.
    static func createTester(
        _ environment: ServeEnvironment, authorization: String? = nil
    ) async throws
        -> HTTPResponse.Status
    {
        try await Application(router: environment.sandboxRouter(isLocal: { _ in false })).test(.router) { client in
            var headers: HTTPFields = [:]
            if let authorization { headers[.authorization] = authorization }
            return try await client.execute(
                uri: "/v1/control/testers", method: .post, headers: headers,
                body: ByteBuffer(string: #"{"name": "mallory@example.com"}"#)
            ).status
        }
    }

    @Test func theHostAndTheTokenDecideWhoGetsIn() async throws {
        let scratch = try ScratchDirectory()
        let loopback = try await Self.environment(scratch, ["--host", "127.0.0.1"])
        #expect(loopback.sandboxAccess.rule == .everyone)
        #expect(try await Self.createTester(loopback) == .created, "nothing else reaches a loopback address")

        let open = try await Self.environment(scratch, ["--host", "0.0.0.0"])
        #expect(open.sandboxAccess.rule == .loopbackOnly)
        #expect(open.sandboxAccessSummary.contains("this machine only"))
        #expect(try await Self.createTester(open) == .forbidden)
        #expect(try await Self.createTester(open, authorization: "Bearer " + Self.token) == .forbidden)

        let tokened = try await Self.environment(scratch, ["--host", "0.0.0.0", "--sandbox-token", Self.token])
        #expect(tokened.sandboxAccess.rule == .loopbackOrToken(Self.token))
        #expect(tokened.sandboxAccessSummary.contains("Authorization: Bearer"))
        #expect(try await Self.createTester(tokened) == .unauthorized)
        #expect(try await Self.createTester(tokened, authorization: "Bearer " + Self.token) == .created)

        let fromTheEnvironment = try await Self.environment(
            scratch, ["--host", "192.168.1.5"], variables: ["KAKIN_SANDBOX_TOKEN": Self.token])
        #expect(fromTheEnvironment.sandboxAccess.rule == .loopbackOrToken(Self.token))
    }

    @Test func aShortTokenIsRefused() throws {
        let error = #expect(throws: (any Error).self) {
            try KakinCommand.parseAsRoot(["serve", "--sandbox-token", "short"])
        }
        let message = error.map { KakinCommand.message(for: $0) } ?? ""
        #expect(message.contains("--sandbox-token must be at least 16 characters"), "\(message)")
    }
}
