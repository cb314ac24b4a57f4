import AppStoreModels
import Crypto
import Foundation
import KakinTestSupport
import Testing
import X509

@testable import AppStoreSecurity
import AppStoreTesting

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

    static func mode(_ url: URL) throws -> Int? {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue
    }

    @Test func privateKeysAreOwnerOnlyEvenOverAWiderFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keyFile = directory.appendingPathComponent(SandboxCertificateAuthority.FileName.rootKey)
        try Data("old".utf8).write(to: keyFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyFile.path)
        try authority.write(to: directory)
        for name in [
            SandboxCertificateAuthority.FileName.rootKey, SandboxCertificateAuthority.FileName.intermediateKey,
            SandboxCertificateAuthority.FileName.leafKey,
        ] {
            #expect(try Self.mode(directory.appendingPathComponent(name)) == 0o600, "\(name)")
        }
        #expect(try Self.mode(directory.appendingPathComponent(SandboxCertificateAuthority.FileName.root)) != 0o600)
        #expect(try String(contentsOf: keyFile, encoding: .utf8) == authority.rootKey.pemRepresentation + "\n")
        // Nothing is left behind: no temporary files next to the keys.
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!names.contains { $0.hasPrefix(".") }, "\(names)")
    }

    @Test func revocationsAndRetiredKeysSurviveARestart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = "http://127.0.0.1:9/ocsp"
        let original = try SandboxCertificateAuthority.loadOrCreate(in: directory, ocspURL: url, now: TestAuthority.now)
        let rotated = try original.revoking(.intermediate, at: TestAuthority.now).revoking(.leaf, at: TestAuthority.now)
        try rotated.write(to: directory)
        let loaded = try SandboxCertificateAuthority.load(from: directory)
        #expect(loaded.ocspURL == url)
        #expect(loaded.leaf == rotated.leaf && loaded.intermediate == rotated.intermediate)
        #expect(loaded.root == original.root)
        #expect(loaded.retired.map(\.certificate) == rotated.retired.map(\.certificate))
        #expect(loaded.retired.map(\.issuer) == rotated.retired.map(\.issuer))
        #expect(loaded.retired.map(\.revocationDate) == rotated.retired.map(\.revocationDate))
        let retiredKey = directory.appendingPathComponent(
            SandboxCertificateAuthority.FileName.retiredKey(serialNumber: original.intermediate.serialNumber))
        #expect(try Self.mode(retiredKey) == 0o600)
        // A restarted responder still signs "revoked" for the first leaf, with the old intermediate's key.
        let responder = loaded.responder()
        #expect(responder.status(of: original.leaf, issuedBy: original.intermediate) == .revoked(at: TestAuthority.now))
        let request = try OCSPRequestMessage(
            certificateIDs: [OCSPCertificateID(certificate: original.leaf, issuer: original.intermediate)]
        ).derEncoded()
        let answer = try OCSPResponseMessage(derEncoded: responder.response(to: request, at: TestAuthority.now))
        #expect(answer.answers.map(\.status) == [.revoked(at: TestAuthority.now)])
        // loadOrCreate with the same URL keeps everything.
        let again = try SandboxCertificateAuthority.loadOrCreate(in: directory, ocspURL: url)
        #expect(again.leaf == rotated.leaf && again.retired.count == rotated.retired.count)
    }

    @Test func anOldDirectoryLoadsAndGetsTheOCSPURLWhenAsked() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try authority.write(to: directory)
        let retiredFile = directory.appendingPathComponent(SandboxCertificateAuthority.FileName.retired)
        #expect(!FileManager.default.fileExists(atPath: retiredFile.path))
        let old = try SandboxCertificateAuthority.loadOrCreate(in: directory)
        #expect(old.leaf == authority.leaf && old.retired.isEmpty && old.ocspURL == nil)

        let url = "http://127.0.0.1:8081/ocsp"
        let upgraded = try SandboxCertificateAuthority.loadOrCreate(in: directory, ocspURL: url)
        #expect(upgraded.root == authority.root)
        #expect(upgraded.rootKey.rawRepresentation == authority.rootKey.rawRepresentation)
        #expect(upgraded.leaf != authority.leaf && upgraded.intermediate != authority.intermediate)
        #expect(SandboxCertificateAuthority.ocspResponderURL(of: upgraded.leaf) == url)
        #expect(SandboxCertificateAuthority.ocspResponderURL(of: upgraded.intermediate) == url)
        #expect(upgraded.retired.count == 2 && upgraded.revokedCertificates.isEmpty)
        let reloaded = try SandboxCertificateAuthority.load(from: directory)
        #expect(reloaded.leaf == upgraded.leaf && reloaded.ocspURL == url && reloaded.retired.count == 2)
        // A new port reissues again, under the same root.
        let moved = try SandboxCertificateAuthority.loadOrCreate(in: directory, ocspURL: "http://127.0.0.1:9000/ocsp")
        #expect(moved.root == authority.root && moved.leaf != upgraded.leaf && moved.retired.count == 4)
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
    func applesVerifierAcceptsWhatWeSign() async throws {
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
        let result = try await Python.run(
            script, arguments: [rootBase64, signedTransaction, signedNotification])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("com.example.kakin.removeAd 2000000123 TEST"), "\(result.output)")

        // And it refuses the same data under another root, as ours does.
        let foreign = Data(TestAuthority.foreign.root.derBytes).base64EncodedString()
        let refused = try await Python.run(
            script, arguments: [foreign, signedTransaction, signedNotification])
        #expect(refused.status != 0)
    }
}
