import AppStoreSecurity
import ArgumentParser
import Foundation
import KakinTestSupport
import Testing

@testable import KakinCLI

/// `kakin serve --revocation`: the purchase server checks the sandbox's signing certificates
/// with the sandbox's own OCSP responder, over real HTTP.
@Suite struct ServeRevocationTests {
    static let examples = ServerCommandTests.examples

    @Test func theRevocationOptionIsValidatedAndSetsTheServedApp() async throws {
        let scratch = try ScratchDirectory()
        let common = [
            "serve", "--data", scratch.path("data"),
            "--catalog", Self.examples.appendingPathComponent("Kakin.storekit").path,
            "--grants", Self.examples.appendingPathComponent("Kakin.grants.json").path,
        ]
        func options(_ extra: String...) throws -> ServeEnvironment.Options {
            let command = try #require(try KakinCommand.parseAsRoot(common + extra) as? ServeCommand)
            return try command.resolvedOptions(environment: [:])
        }

        let error = #expect(throws: (any Error).self) {
            try KakinCommand.parseAsRoot(common + ["--revocation", "strict"])
        }
        let message = error.map { KakinCommand.message(for: $0) } ?? ""
        #expect(message.contains("--revocation must be require, bestEffort or off; found strict"), "\(message)")
        let file = try scratch.write(#"{"revocation": "sometimes"}"#, to: "bad.json")
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(common + ["--config", file]) }

        #expect(try options().revocation == nil, "not set: the Sandbox default")
        #expect(try options("--revocation", "require").revocation == .require)
        #expect(try options("--revocation", "bestEffort").revocation == .bestEffort)
        let off = try scratch.write(#"{"revocation": "off"}"#, to: "off.json")
        #expect(try options("--config", off).revocation == .off)
        #expect(try options("--config", off, "--revocation", "require").revocation == .require, "the flag wins")

        // The served app carries the mode; without one it takes the Sandbox default.
        let required = try await ServeEnvironment.make(try options("--revocation", "require"))
        #expect(required.server.apps.map(\.revocation) == [.require])
        let unset = try await ServeEnvironment.make(try options())
        #expect(unset.server.apps.map(\.revocation) == [nil])
    }

    /// A `kakin serve` process on two free loopback ports.
    struct Serve {
        let process: RunningProcess
        let server: String
        let sandbox: String
        let publishable: String

        init(data: String, arguments extra: [String]) async throws {
            // A port found free can be taken by another test before the server binds it: then the
            // server exits at once, saying so, and starts again on other ports.
            var attempt = 0
            while true {
                attempt += 1
                let port = try freePort()
                var sandboxPort = try freePort()
                while sandboxPort == port { sandboxPort = try freePort() }
                let started = try RunningProcess(
                    [
                        "serve", "--data", data, "--port", "\(port)", "--sandbox-port", "\(sandboxPort)",
                        "--catalog", ServeRevocationTests.examples.appendingPathComponent("Kakin.storekit").path,
                        "--grants", ServeRevocationTests.examples.appendingPathComponent("Kakin.grants.json").path,
                    ] + extra)
                if attempt < 5, try await started.outputOrExit(containing: "sandbox root CA:") == nil,
                    await started.exitStatus() != 0, started.errors.contains("already in use")
                {
                    continue
                }
                process = started
                server = "http://127.0.0.1:\(port)"
                sandbox = "http://127.0.0.1:\(sandboxPort)"
                break
            }
            let banner = try await process.waitForOutput(containing: "sandbox root CA:")
            let line = banner.split(separator: "\n").first { $0.contains("publishable key:") }
            publishable = String(try #require(line?.split(separator: " ").last))
        }

        /// A purchase by a new tester on the sandbox's device API; its signed transaction.
        func buy(tester: String) async throws -> String {
            let added = try await exchange(
                "POST", "\(sandbox)/v1/control/testers", json: ["name": tester, "id": tester])
            #expect(added.status == 200 || added.status == 201, "\(added.body)")
            let payment = try await exchange(
                "POST", "\(sandbox)/v1/device/payments",
                json: ["testerID": tester, "productID": "com.example.kakin.credits5"])
            let transaction = try #require(payment.body["transaction"] as? [String: Any], "\(payment.body)")
            return try #require(transaction["jwsRepresentation"] as? String)
        }

        /// The app posting a signed transaction to the server: the status and `error` object.
        func upload(_ jws: String, for user: String) async throws -> (status: Int, error: [String: Any]) {
            let posted = try await exchange(
                "POST", "\(server)/v1/transactions", headers: ["X-Kakin-Key": publishable],
                json: ["bundleId": ServerCommandTests.bundleID, "appUserId": user, "signedTransaction": jws])
            return (posted.status, posted.body["error"] as? [String: Any] ?? [:])
        }

        /// Revokes the leaf in use; new purchases are signed by a fresh one.
        func revokeLeaf() async throws {
            let revoked = try await exchange("POST", "\(sandbox)/v1/control/ca/revoke", json: ["certificate": "leaf"])
            #expect(revoked.status == 200, "\(revoked.body)")
        }

        func setResponder(available: Bool) async throws {
            let switched = try await exchange(
                "POST", "\(sandbox)/v1/control/ca/responder", json: ["available": available])
            #expect(switched.status == 200 && switched.body["responderAvailable"] as? Bool == available)
        }
    }

    /// The server's mode: the Sandbox default (no flag), or `--revocation require`.
    enum Mode: String, CaseIterable, Sendable {
        case sandboxDefault
        case require

        var arguments: [String] { self == .require ? ["--revocation", "require"] : [] }
    }

    /// A good answer is kept until its nextUpdate and a missing one for 30 seconds, both per
    /// chain, so each step signs with a leaf the server has not checked yet.
    @Test(
        .enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"),
        arguments: Mode.allCases)
    func aRevokedLeafIsRefusedAndAMissingAnswerFollowsTheMode(_ mode: Mode) async throws {
        let scratch = try ScratchDirectory()
        let serve = try await Serve(data: scratch.path("data"), arguments: mode.arguments)
        defer { _ = serve.process.stop() }
        // The sandbox's notifications stay queued: each would have the server check the chain
        // that signed it whenever it arrives, before or after a revocation.
        let settings = try await exchange(
            "PUT", "\(serve.sandbox)/v1/control/settings", json: ["notificationURL": NSNull()])
        #expect(settings.status == 200, "\(settings.body)")

        // Two purchases signed by the first leaf, uploaded only once it is revoked.
        let first = try await serve.buy(tester: "first")
        let second = try await serve.buy(tester: "second")
        try await serve.revokeLeaf()
        for (jws, user) in [(first, "first"), (second, "second")] {
            let refused = try await serve.upload(jws, for: user)
            #expect(refused.status == 422, "\(refused.error)")
            #expect(refused.error["code"] as? String == "verificationFailed")
            #expect(refused.error["cause"] as? String == "certificateRevoked")
            #expect(refused.error["retryable"] as? Bool == false)
        }

        // The fresh leaf is good.
        let third = try await serve.upload(try await serve.buy(tester: "third"), for: "third")
        #expect(third.status == 200, "\(third.error)")

        // The responder is down and the leaf fresh again: no answer for the new chain.
        try await serve.setResponder(available: false)
        try await serve.revokeLeaf()
        let fourth = try await serve.upload(try await serve.buy(tester: "fourth"), for: "fourth")
        switch mode {
        case .sandboxDefault:
            #expect(fourth.status == 200, "bestEffort lets it through: \(fourth.error)")
        case .require:
            #expect(fourth.status == 503, "\(fourth.error)")
            #expect(fourth.error["code"] as? String == "appleUnavailable")
            #expect(fourth.error["cause"] as? String == "revocationUnavailable")
            #expect(fourth.error["retryable"] as? Bool == true)
        }

        // Back on, a chain the server has not seen is answered for and accepted under either
        // mode (the failed check of the previous one is kept for a while, so it is not retried).
        try await serve.setResponder(available: true)
        try await serve.revokeLeaf()
        let fifth = try await serve.upload(try await serve.buy(tester: "fifth"), for: "fifth")
        #expect(fifth.status == 200, "\(fifth.error)")
    }
}
