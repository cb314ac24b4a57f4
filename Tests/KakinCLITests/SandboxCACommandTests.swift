import AppStoreSecurity
import AppStoreTesting
import Foundation
import KakinTestSupport
import StoreSandbox
import Testing

@testable import KakinCLI

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `kakin sandbox ca …` against a running sandbox, and the OCSP URL `kakin serve` and
/// `kakin sandbox run` put in the sandbox's certificates.
@Suite struct SandboxCACommandTests {
    @Test func revokeShowAndTheResponderSwitch() async throws {
        try await SandboxCommandTests().withSandbox { engine, url in
            let before = engine.authority
            let revoked = try await kakin("sandbox", "ca", "revoke", "leaf", "--url", url)
            #expect(revoked.exitCode == 0, "\(revoked.standardError)")
            let answer = try #require(
                try JSONSerialization.jsonObject(with: Data(revoked.standardOutput.utf8)) as? [String: Any])
            let gone = try #require(answer["revoked"] as? [[String: Any]])
            #expect(gone.map { $0["serialNumber"] as? String } == [before.currentCertificates[2].serialNumber])
            #expect(engine.authority.leaf != before.leaf && engine.authority.root == before.root)

            let shown = try await kakin("sandbox", "ca", "show", "--url", url)
            #expect(shown.exitCode == 0, "\(shown.standardError)")
            #expect(shown.standardOutput.contains(engine.authority.currentCertificates[2].serialNumber))
            #expect(shown.standardOutput.contains("\"revoked\""))

            let intermediate = try await kakin("sandbox", "ca", "revoke", "intermediate", "--url", url)
            #expect(intermediate.exitCode == 0, "\(intermediate.standardError)")
            #expect(engine.authority.intermediate != before.intermediate)
            #expect(engine.authority.revokedCertificates.count == 3)

            #expect(try await kakin("sandbox", "ca", "responder", "off", "--url", url).exitCode == 0)
            #expect(!engine.isOCSPResponderAvailable)
            #expect(try await kakin("sandbox", "ca", "responder", "on", "--url", url).exitCode == 0)
            #expect(engine.isOCSPResponderAvailable)
        }
    }

    @Test func badArgumentsAndAnUnreachableSandbox() async throws {
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["sandbox", "ca", "revoke", "root"]) }
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["sandbox", "ca", "revoke"]) }
        #expect(throws: (any Error).self) { try KakinCommand.parseAsRoot(["sandbox", "ca", "responder", "maybe"]) }
        let port = try freePort()
        let output = try await kakin("sandbox", "ca", "revoke", "leaf", "--url", "http://127.0.0.1:\(port)")
        #expect(output.exitCode == 1)
        #expect(output.standardError.hasPrefix("error: the sandbox at http://127.0.0.1:\(port) cannot be reached"))
    }

    @Test func serveNamesTheSandboxsResponderAndMovesItWithThePort() async throws {
        let scratch = try ScratchDirectory()
        let examples = SandboxCommandTests.catalog.deletingLastPathComponent()
        var options = ServeEnvironment.Options()
        options.data = scratch.path("data")
        options.catalog = SandboxCommandTests.catalog.path
        options.grants = examples.appendingPathComponent("Kakin.grants.json").path
        options.sandboxPort = 9_181
        let first = try await ServeEnvironment.make(options)
        let authority = first.sandbox.engine.authority
        #expect(first.ocspURL == "http://127.0.0.1:9181/ocsp")
        #expect(SandboxCertificateAuthority.ocspResponderURL(of: authority.leaf) == "http://127.0.0.1:9181/ocsp")
        #expect(
            SandboxCertificateAuthority.ocspResponderURL(of: authority.intermediate) == "http://127.0.0.1:9181/ocsp")
        #expect(SandboxCertificateAuthority.ocspResponderURL(of: authority.root) == nil)

        // Revoked in one run, still revoked in the next; another port gets new certificates
        // under the same root (which the server trusts from root.pem).
        try await first.sandbox.engine.revokeCertificate(.leaf)
        options.sandboxPort = 9_182
        let second = try await ServeEnvironment.make(options)
        let moved = second.sandbox.engine.authority
        #expect(moved.root == authority.root)
        #expect(SandboxCertificateAuthority.ocspResponderURL(of: moved.leaf) == "http://127.0.0.1:9182/ocsp")
        #expect(moved.responder().status(of: authority.leaf, issuedBy: authority.intermediate) != .good)
        let keys = URL(fileURLWithPath: scratch.path("data")).appendingPathComponent("keys.json")
        let mode = try FileManager.default.attributesOfItem(atPath: keys.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: scratch.path("data"))[.posixPermissions] as? NSNumber
        #expect(folder?.intValue == 0o700)
    }

    @Test func sandboxRunNamesItsPortOrLearnsIt() async throws {
        var command = try #require(
            try KakinCommand.parseAsRoot(["sandbox", "--catalog", SandboxCommandTests.catalog.path, "--port", "9183"])
                as? SandboxRunCommand)
        let fixed = try command.makeService().engine.authority
        #expect(SandboxCertificateAuthority.ocspResponderURL(of: fixed.leaf) == "http://127.0.0.1:9183/ocsp")
        command.port = 0
        let engine = try command.makeService().engine
        #expect(engine.authority.ocspURL == nil)
        let root = engine.authority.root
        try await engine.useOCSPURL(SandboxRunCommand.ocspURL(host: "127.0.0.1", port: 40_000))
        #expect(
            SandboxCertificateAuthority.ocspResponderURL(of: engine.authority.leaf) == "http://127.0.0.1:40000/ocsp")
        #expect(engine.authority.root == root)
    }

    /// The built binary on port 0 names the port it got, in its banner and in its certificates,
    /// and answers OCSP there.
    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func theRunningSandboxAnswersAtTheURLItsCertificatesName() async throws {
        let process = try RunningProcess(["sandbox", "--port", "0", "--catalog", SandboxCommandTests.catalog.path])
        defer { _ = process.stop() }
        let output = try await process.waitForOutput(containing: "OCSP:")
        let line = try #require(output.split(separator: "\n").first { $0.contains("OCSP:") })
        let ocspURL = String(try #require(line.split(separator: " ").last))
        let base = String(ocspURL.dropLast("/ocsp".count))
        let shown = try await kakin("sandbox", "ca", "show", "--url", base)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any])
        #expect(object["ocspURL"] as? String == ocspURL)
        let current = try #require(object["current"] as? [[String: Any]])
        #expect(current.map { $0["ocspURL"] as? String } == [nil, ocspURL, ocspURL])

        var request = URLRequest(url: try #require(URL(string: ocspURL)))
        request.httpMethod = "POST"
        request.setValue("application/ocsp-request", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data([0x30, 0x00])
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(try OCSPResponseMessage(derEncoded: Array(data)).status == .malformedRequest)
    }
}
