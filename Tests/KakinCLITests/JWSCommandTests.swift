import Foundation
import KakinCLI
import KakinTestSupport
import Testing

@Suite struct JWSCommandTests {
    @Test func createSignDecodeVerify() async throws {
        let scratch = try ScratchDirectory()
        let created = try await kakin("ca", "create", "--out", scratch.path("ca"))
        #expect(created.exitCode == 0, "\(created.standardError)")
        let again = try await kakin("ca", "create", "--out", scratch.path("ca"))
        #expect(again.exitCode == 1)

        let payload = try scratch.write(
            #"{"transactionId":"1","bundleId":"com.example.kakin","environment":"Sandbox","signedDate":\#(Int64(Date().timeIntervalSince1970 * 1000))}"#,
            to: "payload.json")
        let signed = try await kakin("jws", "sign", "--ca", scratch.path("ca"), payload)
        #expect(signed.exitCode == 0, "\(signed.standardError)")
        let jwsFile = try scratch.write(signed.standardOutput, to: "t.jws")

        let decoded = try await kakin("jws", "decode", jwsFile)
        #expect(decoded.standardOutput.contains(#""alg" : "ES256""#))
        #expect(decoded.standardOutput.contains(#""transactionId" : "1""#))

        for root in ["root.pem", "root.cer"] {
            let verified = try await kakin(
                "jws", "verify", "--root", scratch.path("ca/\(root)"), "--bundle-id", "com.example.kakin",
                "--environment", "Sandbox", jwsFile)
            #expect(verified.exitCode == 0, "\(verified.standardError)")
            #expect(verified.standardOutput.contains(#""bundleId" : "com.example.kakin""#))
        }

        let untrusted = try await kakin("jws", "verify", jwsFile)
        #expect(untrusted.exitCode == 1)
        #expect(untrusted.standardError.hasPrefix("invalid: untrustedChain"))
        #expect(!untrusted.standardError.contains("\n"))

        let wrongBundle = try await kakin(
            "jws", "verify", "--root", scratch.path("ca/root.pem"), "--bundle-id", "com.other", jwsFile)
        #expect(wrongBundle.standardError.hasPrefix("invalid: wrongBundleID"))
        let wrongEnvironment = try await kakin(
            "jws", "verify", "--root", scratch.path("ca/root.pem"), "--environment", "Production", jwsFile)
        #expect(wrongEnvironment.standardError.hasPrefix("invalid: wrongEnvironment"))
        let expired = try await kakin(
            "jws", "verify", "--root", scratch.path("ca/root.pem"), "--at", "2100-01-01T00:00:00Z", jwsFile)
        #expect(expired.standardError.hasPrefix("invalid: certificateExpired"))

        // `kakin ca create` names no OCSP responder: required revocation checks cannot pass,
        // best-effort ones let the chain through.
        let required = try await kakin(
            "jws", "verify", "--root", scratch.path("ca/root.pem"), "--revocation", "require", jwsFile)
        #expect(required.standardError.hasPrefix("invalid: untrustedChain"), "\(required.standardError)")
        #expect(required.standardError.contains("OCSP"))
        let bestEffort = try await kakin(
            "jws", "verify", "--root", scratch.path("ca/root.pem"), "--revocation", "bestEffort", jwsFile)
        #expect(bestEffort.exitCode == 0, "\(bestEffort.standardError)")
    }

    @Test func malformedInputGetsOneLine() async throws {
        let scratch = try ScratchDirectory()
        let cases = [
            try scratch.write("", to: "empty"), try scratch.write("not a jws", to: "text"),
            try scratch.write("a.b.c", to: "abc"), scratch.path("missing"), scratch.url.path,
        ]
        for file in cases {
            for command in [["jws", "decode", file], ["jws", "verify", file]] {
                let command = try KakinCommand.parseAsRoot(command) as! any OutputProducingCommand
                let output = await command.produceOutput()
                #expect(output.exitCode == 1, "\(file)")
                #expect(
                    !output.standardError.isEmpty && !output.standardError.contains("\n"), "\(output.standardError)")
            }
        }
        let badPayload = try scratch.write("[1,2]", to: "array.json")
        _ = try await kakin("ca", "create", "--out", scratch.path("ca"))
        let sign = try await kakin("jws", "sign", "--ca", scratch.path("ca"), badPayload)
        #expect(sign.standardError.hasPrefix("error: malformedInput"))
        let noCA = try await kakin("jws", "sign", "--ca", scratch.path("nothing"), badPayload)
        #expect(noCA.exitCode == 1)
    }

    @Test func optionsAreValidated() {
        #expect(throws: (any Error).self) {
            try KakinCommand.parseAsRoot(["jws", "verify", "--environment", "Mars", "x"])
        }
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["jws", "verify", "--at", "yesterday", "x"]) }
    }

    @Test(.enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
    func verifiesApplesFixtures() async throws {
        let root = SharedFixtures.path("certs/testCA.der")
        let valid = try await kakin(
            "jws", "verify", "--root", root, "--bundle-id", "com.example", "--environment", "Sandbox",
            SharedFixtures.path("mock_signed_data/testNotification"))
        #expect(valid.exitCode == 0, "\(valid.standardError)")
        let production = try await kakin(
            "jws", "verify", "--root", root, "--bundle-id", "com.example", "--app-apple-id", "1234",
            "--environment", "Production", SharedFixtures.path("mock_signed_data/testNotification"))
        #expect(production.standardError.hasPrefix("invalid: wrongEnvironment"))
        let otherApp = try await kakin(
            "jws", "verify", "--root", root, "--bundle-id", "com.example", "--app-apple-id", "1235",
            "--environment", "Production", SharedFixtures.path("mock_signed_data/testNotification"))
        #expect(otherApp.standardError.hasPrefix("invalid: wrongAppAppleID"))
        let xcode = SharedFixtures.path("xcode/xcode-signed-transaction")
        #expect(try await kakin("jws", "verify", "--environment", "Xcode", xcode).exitCode == 0)
        #expect(
            try await kakin("jws", "verify", "--environment", "Sandbox", xcode).standardError.hasPrefix(
                "invalid: invalidChainLength"))
    }
}

@Suite struct RealAppleJWSCommandTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("AppStoreSecurityTests/Vectors/apple-sandbox-test-notification.jws").path

    @Test func verifiesWithTheEmbeddedAppleRoot() async throws {
        let valid = try await kakin(
            "jws", "verify", "--bundle-id", "com.loki-project.loki-messenger", "--environment", "Sandbox", Self.file)
        #expect(valid.exitCode == 0, "\(valid.standardError)")
        #expect(valid.standardOutput.contains(#""notificationType" : "TEST""#))
        let late = try await kakin("jws", "verify", "--at", "2026-01-01T00:00:00Z", Self.file)
        #expect(late.standardError.hasPrefix("invalid: certificateExpired"))
    }
}
