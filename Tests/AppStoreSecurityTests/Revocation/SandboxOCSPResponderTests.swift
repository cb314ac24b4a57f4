import AppStoreSecurity
import AppStoreTesting
import Crypto
import Foundation
import Testing
@_spi(FixedExpiryValidationTime) import X509

/// The sandbox authority's revocation and its responder, checked by swift-certificates'
/// `OCSPVerifierPolicy` as a server would check the App Store's certificates.
@Suite struct SandboxOCSPResponderTests {
    static let now = TestAuthority.now
    static let url = "http://127.0.0.1:9/ocsp"
    static let authority = try! SandboxCertificateAuthority.generate(now: now, ocspURL: url)

    static func chain(_ authority: SandboxCertificateAuthority) -> [Certificate] {
        [authority.leaf, authority.intermediate, authority.root]
    }

    static func answer(
        _ responder: SandboxOCSPResponder, about certificate: Certificate, issuedBy issuer: Certificate,
        hash: OCSPHashAlgorithm = .sha1, nonce: [UInt8]? = nil
    ) throws -> OCSPResponseMessage {
        let request = OCSPRequestMessage(
            certificateIDs: [OCSPCertificateID(certificate: certificate, issuer: issuer, hashAlgorithm: hash)],
            nonce: nonce)
        return try OCSPResponseMessage(derEncoded: responder.response(to: try request.derEncoded(), at: now))
    }

    @Test func theIntermediateAndTheLeafNameTheResponderButNotTheRoot() async throws {
        let authority = Self.authority
        #expect(authority.ocspURL == Self.url)
        for certificate in [authority.intermediate, authority.leaf] {
            let access = try #require(try certificate.extensions.authorityInformationAccess)
            #expect(Array(access) == [.init(method: .ocspServer, location: .uniformResourceIdentifier(Self.url))])
            #expect(certificate.extensions[oid: .X509ExtensionID.authorityInformationAccess]?.critical == false)
        }
        #expect(try authority.root.extensions.authorityInformationAccess == nil)
        // Without a URL, the certificates are as they always were.
        for certificate in Self.chain(TestAuthority.shared) {
            #expect(try certificate.extensions.authorityInformationAccess == nil)
        }
        #expect(TestAuthority.shared.ocspURL == nil)
        _ = try await CertificateChainVerifier(roots: [authority.root]).verify(
            leaf: authority.leaf, intermediate: authority.intermediate, at: Self.now)
    }

    @Test(arguments: [OCSPHashAlgorithm.sha1, .sha256])
    func answersAreSignedByTheIssuerInTheRequestedHash(hash: OCSPHashAlgorithm) throws {
        let responder = Self.authority.responder(validity: 600)
        let nonce = OCSPRequestMessage.randomNonce()
        let leaf = try Self.answer(
            responder, about: Self.authority.leaf, issuedBy: Self.authority.intermediate, hash: hash, nonce: nonce)
        #expect(leaf.status == .successful)
        #expect(leaf.answers.map(\.status) == [.good])
        #expect(leaf.answers[0].certificateID.hashAlgorithm == hash)
        #expect(leaf.answers[0].thisUpdate == Self.now)
        #expect(leaf.answers[0].nextUpdate == Self.now.addingTimeInterval(600))
        #expect(leaf.nonce == nonce)
        #expect(leaf.responderKeyHash == Self.keyHash(Self.authority.intermediate))
        let intermediate = try Self.answer(
            responder, about: Self.authority.intermediate, issuedBy: Self.authority.root, hash: hash)
        #expect(intermediate.answers.map(\.status) == [.good])
        #expect(intermediate.responderKeyHash == Self.keyHash(Self.authority.root))
        #expect(intermediate.nonce == nil)
    }

    static func keyHash(_ certificate: Certificate) -> [UInt8] {
        Array(Insecure.SHA1.hash(data: certificate.publicKey.subjectPublicKeyInfoBytes))
    }

    @Test func unknownSerialsForeignIssuersAndGarbage() throws {
        let responder = Self.authority.responder()
        let stranger = try SandboxCertificateAuthority.issueLeaf(
            name: "Stranger", publicKey: P256.Signing.PrivateKey().publicKey, intermediate: Self.authority.intermediate,
            intermediateKey: Self.authority.intermediateKey, notValidBefore: Self.now, notValidAfter: Self.now + 86_400)
        #expect(
            try Self.answer(responder, about: stranger, issuedBy: Self.authority.intermediate).answers.map(\.status)
                == [.unknown])
        let foreign = TestAuthority.foreign
        #expect(try Self.answer(responder, about: foreign.leaf, issuedBy: foreign.intermediate).status == .unauthorized)
        #expect(
            try OCSPResponseMessage(derEncoded: responder.response(to: [0x30, 0x01], at: Self.now)).status
                == .malformedRequest)
        #expect(responder.status(of: foreign.leaf, issuedBy: foreign.intermediate) == nil)
        #expect(responder.status(of: stranger, issuedBy: Self.authority.intermediate) == .unknown)
    }

    @Test func revokingTheLeafRotatesItUnderTheSameIntermediate() async throws {
        let before = Self.authority
        let revokedAt = Self.now.addingTimeInterval(0.75)
        let after = try before.revoking(.leaf, at: revokedAt)
        #expect(after.root == before.root && after.intermediate == before.intermediate)
        #expect(after.leaf != before.leaf && after.leaf.serialNumber != before.leaf.serialNumber)
        #expect(after.leaf.publicKey == Certificate.PublicKey(after.leafKey.publicKey))
        #expect(after.ocspURL == Self.url && SandboxCertificateAuthority.ocspResponderURL(of: after.leaf) == Self.url)
        #expect(
            after.leaf.notValidAfter.timeIntervalSince(after.leaf.notValidBefore)
                == before.leaf.notValidAfter.timeIntervalSince(before.leaf.notValidBefore))
        #expect(after.revokedCertificates.map(\.kind) == [.leaf])
        #expect(after.revokedCertificates[0].certificate == before.leaf)
        #expect(after.revokedCertificateDescriptions.map(\.status) == ["revoked"])

        let responder = after.responder()
        #expect(responder.status(of: before.leaf, issuedBy: before.intermediate) == .revoked(at: Self.now))
        #expect(responder.status(of: after.leaf, issuedBy: after.intermediate) == .good)
        let old = await OCSPCheck.evaluate(
            Self.chain(before), requester: .init(responder: responder, now: Self.now), now: Self.now)
        #expect(!OCSPCheck.accepted(old), "the old leaf is revoked")
        let new = await OCSPCheck.evaluate(
            Self.chain(after), requester: .init(responder: responder, now: Self.now), now: Self.now)
        #expect(OCSPCheck.accepted(new), "\(new)")
        _ = try await CertificateChainVerifier(roots: [before.root]).verify(
            leaf: after.leaf, intermediate: after.intermediate, at: Self.now)
    }

    @Test func revokingTheIntermediateRevokesItsLeafToo() async throws {
        let before = try Self.authority.revoking(.leaf, at: Self.now)
        let after = try before.revoking(.intermediate, at: Self.now)
        #expect(after.root == before.root)
        #expect(after.intermediate != before.intermediate && after.leaf != before.leaf)
        #expect(after.leaf.issuer == after.intermediate.subject)
        #expect(after.revokedCertificates.map(\.kind) == [.leaf, .intermediate, .leaf])
        #expect(after.revokedCertificateDescriptions.map(\.kind) == ["leaf", "intermediate", "leaf"])
        let responder = after.responder()
        #expect(responder.status(of: before.intermediate, issuedBy: before.root) == .revoked(at: Self.now))
        // The old leaf's answer is signed with the retired intermediate's key.
        let oldLeaf = try Self.answer(responder, about: before.leaf, issuedBy: before.intermediate)
        #expect(oldLeaf.answers.map(\.status) == [.revoked(at: Self.now)])
        #expect(oldLeaf.responderKeyHash == Self.keyHash(before.intermediate))
        for (chain, accepted) in [(Self.chain(before), false), (Self.chain(after), true)] {
            let result = await OCSPCheck.evaluate(
                chain, requester: .init(responder: responder, now: Self.now), now: Self.now)
            #expect(OCSPCheck.accepted(result) == accepted, "\(result)")
        }
        // Even a chain whose leaf is good but whose intermediate is revoked fails.
        let mixed = [after.leaf, before.intermediate, before.root]
        #expect(
            !OCSPCheck.accepted(
                await OCSPCheck.evaluate(mixed, requester: .init(responder: responder, now: Self.now), now: Self.now)))
        _ = try await CertificateChainVerifier(roots: [before.root]).verify(
            leaf: after.leaf, intermediate: after.intermediate, at: Self.now)
    }

    @Test func reissuingForAnotherURLRetiresWithoutRevoking() throws {
        let other = "http://127.0.0.1:10/ocsp"
        let after = try Self.authority.reissuing(ocspURL: other, at: Self.now)
        #expect(after.ocspURL == other)
        #expect(SandboxCertificateAuthority.ocspResponderURL(of: after.intermediate) == other)
        #expect(SandboxCertificateAuthority.ocspResponderURL(of: after.leaf) == other)
        #expect(after.root == Self.authority.root)
        #expect(after.retired.count == 2 && after.revokedCertificates.isEmpty)
        #expect(after.responder().status(of: Self.authority.leaf, issuedBy: Self.authority.intermediate) == .good)
        #expect(try after.reissuing(ocspURL: other).leaf == after.leaf, "nothing to do")
    }
}
