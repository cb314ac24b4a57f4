import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import StoreSandbox
import Testing

/// Apple's own App Store Server Library (Python), with online checks on, asks the sandbox's OCSP
/// responder about every certificate of a chain, as it asks Apple's: it accepts what the sandbox
/// signs, and refuses what a revoked certificate signed. Skipped, with a message, when the library
/// is not installed.
@Suite struct AppleOnlineCheckTests {
    static let script = """
        import base64, sys
        from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException
        from appstoreserverlibrary.models.Environment import Environment
        root = base64.b64decode(sys.argv[1])
        for jws in sys.argv[2:]:
            verifier = SignedDataVerifier([root], True, Environment.SANDBOX, "\(ExampleApp.bundleID)", \(ExampleApp.appAppleID))
            try:
                print("accepted", verifier.verify_and_decode_signed_transaction(jws).productId)
            except VerificationException as e:
                print("refused", e.status.name)
        """

    /// Runs the script without holding a thread of the test's executor while it waits: the
    /// sandbox answering its OCSP requests runs in the same process.
    static func python(_ arguments: [String]) async throws -> String {
        try await Python.run(
            script, arguments: arguments,
            environment: ["NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"]
        ).output
    }

    @Test(.enabled(if: ApplePythonLibrary.available, ApplePythonLibrary.skipMessage))
    func applesOnlineChecksFollowTheSandboxsRevocations() async throws {
        // Real time: Apple's verifier checks certificates and OCSP answers against its own clock.
        let now = Date()
        let catalog = try ExampleApp.catalog()
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: SandboxCertificateAuthority.generate(now: now), clock: .manual(at: now))
        let service = SandboxService(engine: engine, catalog: catalog)
        let tester = try await engine.createTester(name: "online@example.com")
        let bought = try #require(
            try await engine.purchase(.init(testerID: tester.id, productID: "com.example.kakin.removeAd")).transaction)
        try await Application(router: service.router()).test(.live) { client in
            let port = try #require(client.port)
            // The port is known only now: the certificates get the responder's real URL.
            try await engine.useOCSPURL("http://127.0.0.1:\(port)/ocsp")
            let root = Data(engine.authority.root.derBytes).base64EncodedString()
            let first = try engine.signer.signTransaction(bought, at: now)
            let accepted = "accepted com.example.kakin.removeAd"
            let refused = "refused VERIFICATION_FAILURE"
            let before = try await Self.python([root, first])
            #expect(before.split(separator: "\n").last.map(String.init) == accepted, "\(before)")

            // The leaf goes: what it signed is refused, what the new leaf signs is accepted.
            try await engine.revokeCertificate(.leaf)
            let second = try engine.signer.signTransaction(bought, at: now)
            let afterLeaf = try await Self.python([root, first, second])
            #expect(afterLeaf.split(separator: "\n").suffix(2).map(String.init) == [refused, accepted], "\(afterLeaf)")

            // The intermediate goes: its leaf's signatures are refused too.
            try await engine.revokeCertificate(.intermediate)
            let third = try engine.signer.signTransaction(bought, at: now)
            let afterIntermediate = try await Self.python([root, second, third])
            #expect(
                afterIntermediate.split(separator: "\n").suffix(2).map(String.init) == [refused, accepted],
                "\(afterIntermediate)")
        }
    }
}
