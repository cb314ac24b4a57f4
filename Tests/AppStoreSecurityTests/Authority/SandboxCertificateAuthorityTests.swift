import AppStoreModels
import Crypto
import Foundation
import Testing
import X509

@testable import AppStoreSecurity

@Suite struct SandboxCertificateAuthorityTests {
    let authority = TestAuthority.shared

    @Test func chainIsShapedLikeApples() async throws {
        let root = authority.root
        let intermediate = authority.intermediate
        let leaf = authority.leaf
        #expect(root.subject == root.issuer)
        #expect(intermediate.issuer == root.subject)
        #expect(leaf.issuer == intermediate.subject)
        #expect(try root.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: nil))
        #expect(try intermediate.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: 0))
        #expect(try leaf.extensions.basicConstraints == .notCertificateAuthority)
        #expect(try leaf.extensions.keyUsage?.digitalSignature == true)
        #expect(try intermediate.extensions.keyUsage?.keyCertSign == true)
        for certificate in [root, intermediate, leaf] {
            #expect(try certificate.extensions.subjectKeyIdentifier != nil)
        }
        #expect(
            try intermediate.extensions.authorityKeyIdentifier?.keyIdentifier
                == root.extensions.subjectKeyIdentifier?.keyIdentifier)
        let leafMarker = try #require(leaf.extensions[oid: .AppleMarker.receiptSigner])
        #expect(Array(leafMarker.value) == [0x05, 0x00])
        #expect(!leafMarker.critical)
        #expect(intermediate.extensions[oid: .AppleMarker.wwdrIntermediate] != nil)
        #expect(P256.Signing.PublicKey(leaf.publicKey) != nil)
        #expect(P384.Signing.PublicKey(root.publicKey) != nil)
        _ = try await CertificateChainVerifier(roots: [root]).verify(
            leaf: leaf, intermediate: intermediate, at: TestAuthority.now)
    }

    @Test func writesAndLoadsItsFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try authority.write(to: directory)
        let loaded = try SandboxCertificateAuthority.load(from: directory)
        #expect(loaded.root == authority.root)
        #expect(loaded.leaf == authority.leaf)
        #expect(loaded.leafKey.rawRepresentation == authority.leafKey.rawRepresentation)
        let keyAttributes = try FileManager.default.attributesOfItem(
            atPath: directory.appendingPathComponent(SandboxCertificateAuthority.FileName.leafKey).path)
        #expect((keyAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let der = try Data(contentsOf: directory.appendingPathComponent(SandboxCertificateAuthority.FileName.rootDER))
        #expect(try Certificate.load(derOrPEM: der) == authority.root)
    }

    @Test func loadingAMismatchedKeyIsRejected() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try authority.write(to: directory)
        try Data(P256.Signing.PrivateKey().pemRepresentation.utf8)
            .write(to: directory.appendingPathComponent(SandboxCertificateAuthority.FileName.leafKey))
        #expect(throws: AppStoreSecurityError(.invalidConfiguration)) {
            try SandboxCertificateAuthority.load(from: directory)
        }
        #expect(throws: AppStoreSecurityError(.malformedInput)) {
            try SandboxCertificateAuthority.load(from: directory.appendingPathComponent("missing"))
        }
    }

    /// The promise of the sandbox: Apple's own verifier, given our root, accepts what we sign.
    @Test(.enabled(if: ApplePythonLibrary.available, ApplePythonLibrary.skipMessage))
    func applesVerifierAcceptsWhatWeSign() throws {
        let signer = JWSSigner(identity: authority.signingIdentity)
        let signedDate = Date().epochMilliseconds
        let transaction: [String: Any] = [
            "transactionId": "2000000123", "originalTransactionId": "2000000123", "bundleId": "com.example.kakin",
            "productId": "com.example.kakin.removeAd", "purchaseDate": signedDate, "originalPurchaseDate": signedDate,
            "quantity": 1, "type": "Non-Consumable", "inAppOwnershipType": "PURCHASED", "signedDate": signedDate,
            "environment": "Sandbox", "transactionReason": "PURCHASE", "storefront": "USA", "storefrontId": "143441",
            "price": 990, "currency": "USD",
        ]
        let notification: [String: Any] = [
            "notificationType": "TEST", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
            "signedDate": signedDate,
            "data": ["bundleId": "com.example.kakin", "environment": "Sandbox", "appAppleId": 42],
        ]
        let signedTransaction = try signer.sign(payload: try JSONSerialization.data(withJSONObject: transaction))
        let signedNotification = try signer.sign(payload: try JSONSerialization.data(withJSONObject: notification))
        let script = """
            import base64, sys
            from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
            from appstoreserverlibrary.models.Environment import Environment
            root = base64.b64decode(sys.argv[1])
            verifier = SignedDataVerifier([root], False, Environment.SANDBOX, "com.example.kakin", 42)
            t = verifier.verify_and_decode_signed_transaction(sys.argv[2])
            n = verifier.verify_and_decode_notification(sys.argv[3])
            print(t.productId, t.transactionId, n.rawNotificationType)
            """
        let rootBase64 = Data(authority.root.derBytes).base64EncodedString()
        let result = try ApplePythonLibrary.run(
            script: script, arguments: [rootBase64, signedTransaction, signedNotification])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("com.example.kakin.removeAd 2000000123 TEST"), "\(result.output)")

        // And it refuses the same data under another root, as ours does.
        let foreign = Data(TestAuthority.foreign.root.derBytes).base64EncodedString()
        let refused = try ApplePythonLibrary.run(
            script: script, arguments: [foreign, signedTransaction, signedNotification])
        #expect(refused.status != 0)
    }
}
