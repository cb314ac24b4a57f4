import AppStoreModels
import Crypto
import Foundation
import KakinTestSupport
import Testing
import X509

@testable import AppStoreSecurity
import AppStoreTesting

/// Every way of forging or bending a signed payload is rejected, each with the code that names it.
@Suite struct JWSTamperTests {
    let authority = TestAuthority.shared
    let payload = ClaimsPayload(signedDate: TestAuthority.now)

    func verify(_ jws: String, environment: AppStoreEnvironment = .sandbox) async throws -> ClaimsPayload {
        let verifier = try SignedDataVerifier(
            rootCertificates: [authority.root], bundleID: "com.example.kakin", appAppleID: 42, environment: environment,
            now: { TestAuthority.now })
        return try await verifier.verify(jws, as: ClaimsPayload.self, checking: .all)
    }

    func sign(_ payload: ClaimsPayload, with authority: SandboxCertificateAuthority) throws -> String {
        try JWSSigner(identity: authority.signingIdentity).sign(payload)
    }

    /// Replaces one segment of a compact JWS.
    func replacing(_ jws: String, segment: Int, with text: String) -> String {
        var parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts[segment] = text
        return parts.joined(separator: ".")
    }

    func json(_ object: Any) throws -> String {
        Base64URL.encode(try JSONSerialization.data(withJSONObject: object, options: [.withoutEscapingSlashes]))
    }

    var chainStrings: [String] {
        authority.signingIdentity.chain.map { Data($0.derBytes).base64EncodedString() }
    }

    @Test func flippedByteInTheHeader() async throws {
        // Flip a bit inside the signature of x5c[2]: the header still parses and the chain still
        // verifies (the root inside x5c is never used), but the JWS signature no longer matches.
        var chain = authority.signingIdentity.chain.map(\.derBytes)
        chain[2][chain[2].count - 5] ^= 0x01
        let header = try json(["alg": "ES256", "x5c": chain.map { Data($0).base64EncodedString() }])
        let jws = replacing(try sign(payload, with: authority), segment: 0, with: header)
        await #expect(throws: AppStoreSecurityError(.badSignature)) { try await verify(jws) }
    }

    @Test func flippedByteInThePayload() async throws {
        let original = try sign(payload, with: authority)
        var changed = payload
        changed.productId = "com.example.kakin.increasePoints"
        let forged = replacing(original, segment: 1, with: Base64URL.encode(try JSONEncoder().encode(changed)))
        await #expect(throws: AppStoreSecurityError(.badSignature)) { try await verify(forged) }
    }

    @Test func flippedByteInTheSignature() async throws {
        let original = try sign(payload, with: authority)
        var signature = Base64URL.decode(original.split(separator: ".")[2])!
        signature[10] ^= 0x80
        let forged = replacing(original, segment: 2, with: Base64URL.encode(signature))
        await #expect(throws: AppStoreSecurityError(.badSignature)) { try await verify(forged) }
    }

    @Test func everySingleByteFlipIsRejected() async throws {
        let original = try sign(payload, with: authority)
        var bytes = Array(original.utf8)
        for index in stride(from: 0, to: bytes.count, by: 13) where bytes[index] != UInt8(ascii: ".") {
            let saved = bytes[index]
            bytes[index] = saved == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            let forged = String(decoding: bytes, as: UTF8.self)
            await #expect(throws: AppStoreSecurityError.self, "flip at \(index)") { try await verify(forged) }
            bytes[index] = saved
        }
    }

    @Test func droppedCertificate() async throws {
        let identity = SigningIdentity(privateKey: authority.leafKey, chain: [authority.leaf, authority.intermediate])
        let jws = try JWSSigner(identity: identity).sign(payload)
        await #expect(throws: AppStoreSecurityError(.invalidChainLength)) { try await verify(jws) }
    }

    @Test func foreignRoot() async throws {
        let jws = try sign(payload, with: TestAuthority.foreign)
        await #expect(throws: AppStoreSecurityError(.untrustedChain)) { try await verify(jws) }
    }

    @Test func trustedRootInsideX5CDoesNotHelpAForeignChain() async throws {
        let foreign = TestAuthority.foreign
        let identity = SigningIdentity(
            privateKey: foreign.leafKey, chain: [foreign.leaf, foreign.intermediate, authority.root])
        let jws = try JWSSigner(identity: identity).sign(payload)
        await #expect(throws: AppStoreSecurityError(.untrustedChain)) { try await verify(jws) }
    }

    @Test func keyThatIsNotTheLeafs() async throws {
        let identity = SigningIdentity(privateKey: P256.Signing.PrivateKey(), chain: authority.signingIdentity.chain)
        let jws = try JWSSigner(identity: identity).sign(payload)
        await #expect(throws: AppStoreSecurityError(.badSignature)) { try await verify(jws) }
    }

    @Test func expiredLeaf() async throws {
        let expired = try authority.reissuingLeaf(
            notValidBefore: TestAuthority.now.addingTimeInterval(-2 * 365 * 86_400),
            notValidAfter: TestAuthority.now.addingTimeInterval(-365 * 86_400))
        await #expect(throws: AppStoreSecurityError(.certificateExpired)) { try await verify(try sign(payload, with: expired)) }
    }

    @Test func notYetValidLeaf() async throws {
        let future = try authority.reissuingLeaf(
            notValidBefore: TestAuthority.now.addingTimeInterval(86_400),
            notValidAfter: TestAuthority.now.addingTimeInterval(365 * 86_400))
        await #expect(throws: AppStoreSecurityError(.certificateNotYetValid)) { try await verify(try sign(payload, with: future)) }
    }

    @Test func leafWithoutMarkerOID() async throws {
        let unmarked = try authority.reissuingLeaf(
            notValidBefore: TestAuthority.now.addingTimeInterval(-86_400),
            notValidAfter: TestAuthority.now.addingTimeInterval(86_400), includeMarker: false)
        await #expect(throws: AppStoreSecurityError(.missingMarkerOID)) { try await verify(try sign(payload, with: unmarked)) }
    }

    @Test func intermediateWithoutMarkerOID() async throws {
        let key = P384.Signing.PrivateKey()
        let intermediate = try SandboxCertificateAuthority.issueIntermediate(
            name: "Kakin Sandbox", publicKey: Certificate.PublicKey(key.publicKey), root: authority.root,
            rootKey: authority.rootKey, notValidBefore: authority.intermediate.notValidBefore,
            notValidAfter: authority.intermediate.notValidAfter, includeMarker: false)
        let leafKey = P256.Signing.PrivateKey()
        let leaf = try SandboxCertificateAuthority.issueLeaf(
            name: "Kakin Sandbox", publicKey: leafKey.publicKey, intermediate: intermediate, intermediateKey: key,
            notValidBefore: authority.leaf.notValidBefore, notValidAfter: authority.leaf.notValidAfter)
        let jws = try JWSSigner(
            identity: SigningIdentity(privateKey: leafKey, chain: [leaf, intermediate, authority.root])
        )
        .sign(payload)
        await #expect(throws: AppStoreSecurityError(.missingMarkerOID)) { try await verify(jws) }
    }

    @Test func algorithmNone() async throws {
        let header = try json(["alg": "none", "x5c": chainStrings])
        let body = Base64URL.encode(try JSONEncoder().encode(payload))
        await #expect(throws: AppStoreSecurityError(.wrongAlgorithm)) { try await verify("\(header).\(body).") }
    }

    @Test func hs256WithThePublicKeyAsSecret() async throws {
        let header = try json(["alg": "HS256", "x5c": chainStrings])
        let body = Base64URL.encode(try JSONEncoder().encode(payload))
        for secret in [
            Data(authority.leafKey.publicKey.derRepresentation),
            Data(authority.leafKey.publicKey.pemRepresentation.utf8),
        ] {
            let mac = HMAC<SHA256>.authenticationCode(
                for: Data("\(header).\(body)".utf8), using: SymmetricKey(data: secret))
            let jws = "\(header).\(body).\(Base64URL.encode(Data(mac)))"
            await #expect(throws: AppStoreSecurityError(.wrongAlgorithm)) { try await verify(jws) }
        }
    }

    @Test(arguments: ["RS256", "ES384", "es256", ""])
    func otherAlgorithms(_ algorithm: String) async throws {
        let header = try json(["alg": algorithm, "x5c": chainStrings])
        let jws = replacing(try sign(payload, with: authority), segment: 0, with: header)
        await #expect(throws: AppStoreSecurityError(.wrongAlgorithm)) { try await verify(jws) }
    }

    @Test func missingOrBrokenX5C() async throws {
        let original = try sign(payload, with: authority)
        for header in [
            try json(["alg": "ES256"]), try json(["alg": "ES256", "x5c": [String]()]),
            try json(["alg": "ES256", "x5c": ["not base64!", "", ""]]),
            try json(["alg": "ES256", "x5c": [Data("not a certificate".utf8).base64EncodedString(), "", ""]]),
            try json(["alg": "ES256", "x5c": "a string"]),
        ] {
            await #expect(throws: AppStoreSecurityError(.malformedInput)) {
                try await verify(replacing(original, segment: 0, with: header))
            }
        }
    }

    @Test(arguments: ["", "abc", "a.b", "a.b.c.d", "...", "!!!.???.***", "eyJhbGciOiJFUzI1NiJ9.eyJ9.AAAA"])
    func malformedCompactForm(_ text: String) async {
        await #expect(throws: AppStoreSecurityError.self) { try await verify(text) }
    }

    @Test func wrongBundle() async throws {
        let jws = try sign(ClaimsPayload(bundleId: "com.example.wrong", signedDate: TestAuthority.now), with: authority)
        await #expect(throws: AppStoreSecurityError(.wrongBundleID)) { try await verify(jws) }
    }

    @Test func wrongEnvironment() async throws {
        let jws = try sign(ClaimsPayload(appAppleId: 42, signedDate: TestAuthority.now), with: authority)
        await #expect(throws: AppStoreSecurityError(.wrongEnvironment)) { try await verify(jws, environment: .production) }
        let production = try sign(
            ClaimsPayload(environment: .production, signedDate: TestAuthority.now), with: authority)
        await #expect(throws: AppStoreSecurityError(.wrongEnvironment)) { try await verify(production) }
    }
}
