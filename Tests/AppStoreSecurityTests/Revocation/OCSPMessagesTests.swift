import AppStoreSecurity
import AppStoreTesting
import Crypto
import Foundation
import KakinTestSupport
import Testing
@_spi(FixedExpiryValidationTime) import X509

/// The OCSP messages against swift-certificates' `OCSPVerifierPolicy` (which must accept what
/// `OCSPResponseMessage.signed` builds, and refuse what it should) and Python's `cryptography`.
@Suite struct OCSPMessagesTests {
    static let now = TestAuthority.now
    static let url = "http://127.0.0.1:9/ocsp"
    static let authority = try! SandboxCertificateAuthority.generate(now: now, ocspURL: url)
    var chain: [Certificate] { [Self.authority.leaf, Self.authority.intermediate, Self.authority.root] }

    /// Who signs an answer about `id`: its issuer, the intermediate or the root.
    static func issuer(of id: OCSPCertificateID) -> (Certificate, Certificate.PrivateKey) {
        if id.names(issuer: authority.intermediate) {
            return (authority.intermediate, Certificate.PrivateKey(authority.intermediateKey))
        }
        return (authority.root, Certificate.PrivateKey(authority.rootKey))
    }

    /// A requester that answers every request with `status`, valid from `thisUpdate` to `nextUpdate`.
    static func answering(
        _ status: OCSPCertificateStatus, thisUpdate: Date = now, nextUpdate: Date? = now.addingTimeInterval(3_600),
        nonce: (@Sendable (OCSPRequestMessage) -> [UInt8]?)? = nil
    ) -> InProcessRequester {
        InProcessRequester { request in
            let (responder, key) = issuer(of: request.certificateIDs[0])
            return try OCSPResponseMessage.signed(
                answers: request.certificateIDs.map {
                    OCSPSingleAnswer(certificateID: $0, status: status, thisUpdate: thisUpdate, nextUpdate: nextUpdate)
                },
                producedAt: thisUpdate, nonce: nonce.map { $0(request) } ?? request.nonce, responder: responder,
                key: key)
        }
    }

    // MARK: - Requests

    @Test(arguments: [OCSPHashAlgorithm.sha1, .sha256])
    func requestsRoundTrip(hash: OCSPHashAlgorithm) throws {
        let ids = [
            OCSPCertificateID(
                certificate: Self.authority.leaf, issuer: Self.authority.intermediate, hashAlgorithm: hash),
            OCSPCertificateID(
                certificate: Self.authority.intermediate, issuer: Self.authority.root, hashAlgorithm: hash),
        ]
        let nonce = OCSPRequestMessage.randomNonce()
        #expect(nonce.count == 34 && nonce[0] == 0x04 && nonce[1] == 32)
        for request in [OCSPRequestMessage(certificateIDs: ids, nonce: nonce), OCSPRequestMessage(certificateIDs: ids)]
        {
            let read = try OCSPRequestMessage(derEncoded: try request.derEncoded())
            #expect(read.certificateIDs == request.certificateIDs)
            #expect(read.nonce == request.nonce)
        }
        #expect(ids[0].identifies(Self.authority.leaf, issuedBy: Self.authority.intermediate))
        #expect(!ids[0].identifies(Self.authority.intermediate, issuedBy: Self.authority.intermediate))
        #expect(!ids[0].identifies(Self.authority.leaf, issuedBy: Self.authority.root))
        #expect(ids[0].issuerNameHash.count == (hash == .sha1 ? 20 : 32))
    }

    @Test func malformedRequestsAreRefused() throws {
        let good = try OCSPRequestMessage(
            certificateIDs: [OCSPCertificateID(certificate: Self.authority.leaf, issuer: Self.authority.intermediate)]
        ).derEncoded()
        for bytes in [
            [], [0x30, 0x00], Array(good.dropLast()), [0x04, 0x01, 0x00],
            try OCSPRequestMessage(certificateIDs: []).derEncoded(),
        ] {
            #expect(throws: AppStoreSecurityError(.malformedInput)) { try OCSPRequestMessage(derEncoded: bytes) }
        }
    }

    // MARK: - Responses, read back

    @Test func signedResponsesReadBack() throws {
        let id = OCSPCertificateID(
            certificate: Self.authority.leaf, issuer: Self.authority.intermediate, hashAlgorithm: .sha256)
        let revokedAt = Self.now.addingTimeInterval(-600)
        let answers = [
            OCSPSingleAnswer(
                certificateID: id, status: .revoked(at: revokedAt), thisUpdate: Self.now,
                nextUpdate: Self.now.addingTimeInterval(3_600)),
            OCSPSingleAnswer(certificateID: id, status: .unknown, thisUpdate: Self.now, nextUpdate: nil),
        ]
        let nonce = OCSPRequestMessage.randomNonce()
        let der = try OCSPResponseMessage.signed(
            answers: answers, producedAt: Self.now, nonce: nonce, responder: Self.authority.intermediate,
            key: Certificate.PrivateKey(Self.authority.intermediateKey), certificates: [Self.authority.intermediate])
        let read = try OCSPResponseMessage(derEncoded: der)
        #expect(read.status == .successful)
        #expect(read.answers == answers)
        #expect(read.producedAt == Self.now)
        #expect(read.nonce == nonce)
        #expect(read.certificates == [Self.authority.intermediate])
        #expect(
            read.responderKeyHash
                == Array(Insecure.SHA1.hash(data: Self.authority.intermediate.publicKey.subjectPublicKeyInfoBytes)))

        for status in [
            OCSPResponseMessage.Status.malformedRequest, .internalError, .tryLater, .sigRequired, .unauthorized,
        ] {
            let unsuccessful = try OCSPResponseMessage(derEncoded: OCSPResponseMessage.unsuccessful(status))
            #expect(unsuccessful.status == status)
            #expect(unsuccessful.answers.isEmpty && unsuccessful.producedAt == nil)
        }
        #expect(throws: AppStoreSecurityError(.malformedInput)) {
            try OCSPResponseMessage(derEncoded: [0x30, 0x03, 0x0A, 0x01, 0x04])
        }
        #expect(throws: AppStoreSecurityError(.malformedInput)) {
            try OCSPResponseMessage(derEncoded: Array(der.prefix(40)))
        }
    }

    @Test func aKeyThatIsNotTheRespondersIsRefused() {
        #expect(throws: AppStoreSecurityError(.invalidConfiguration)) {
            try OCSPResponseMessage.signed(
                answers: [], producedAt: Self.now, nonce: nil, responder: Self.authority.intermediate,
                key: Certificate.PrivateKey(Self.authority.rootKey))
        }
    }

    // MARK: - swift-certificates' OCSPVerifierPolicy

    @Test func aGoodAnswerIsAccepted() async throws {
        let requester = Self.answering(.good)
        let result = await OCSPCheck.evaluate(chain, requester: requester, now: Self.now)
        #expect(OCSPCheck.accepted(result), "\(result)")
        // One request per certificate that names a responder: the leaf and the intermediate, with
        // SHA-1 CertIDs and a nonce (which the answer echoed), at the URL the certificates name.
        let queries = requester.queries
        try #require(queries.count == 2)
        #expect(queries.allSatisfy { $0.uri == Self.url && $0.request.nonce?.count == 34 })
        #expect(queries.allSatisfy { $0.request.certificateIDs.map(\.hashAlgorithm) == [.sha1] })
        #expect(
            queries[0].request.certificateIDs[0].identifies(Self.authority.leaf, issuedBy: Self.authority.intermediate))
        #expect(
            queries[1].request.certificateIDs[0].identifies(Self.authority.intermediate, issuedBy: Self.authority.root))
    }

    @Test(arguments: [OCSPFailureMode.hard, .soft])
    func aRevokedAnswerIsRefused(mode: OCSPFailureMode) async {
        let result = await OCSPCheck.evaluate(
            chain, requester: Self.answering(.revoked(at: Self.now.addingTimeInterval(-60))), mode: mode, now: Self.now)
        #expect(!OCSPCheck.accepted(result))
        #expect("\(result)".contains("revoked"), "\(result)")
    }

    @Test func anUnknownAnswerIsRefusedInHardMode() async {
        #expect(
            !OCSPCheck.accepted(await OCSPCheck.evaluate(chain, requester: Self.answering(.unknown), now: Self.now)))
        #expect(
            OCSPCheck.accepted(
                await OCSPCheck.evaluate(chain, requester: Self.answering(.unknown), mode: .soft, now: Self.now)))
    }

    @Test func anAnswerSignedByAnotherKeyIsRefused() async {
        let foreign = TestAuthority.foreign
        let requester = InProcessRequester { request in
            try OCSPResponseMessage.signed(
                answers: request.certificateIDs.map {
                    OCSPSingleAnswer(
                        certificateID: $0, status: .good, thisUpdate: Self.now,
                        nextUpdate: Self.now.addingTimeInterval(3_600))
                },
                producedAt: Self.now, nonce: request.nonce, responder: foreign.intermediate,
                key: Certificate.PrivateKey(foreign.intermediateKey))
        }
        let result = await OCSPCheck.evaluate(chain, requester: requester, now: Self.now)
        #expect(!OCSPCheck.accepted(result))
        #expect("\(result)".contains("could not find OCSP responder certificate"), "\(result)")
    }

    @Test func aTamperedSignatureIsRefused() async {
        let honest = Self.answering(.good)
        let requester = InProcessRequester { request in
            var bytes = try honest.answer(request)
            bytes[bytes.count - 1] ^= 0x01  // the last byte of the ECDSA signature
            return bytes
        }
        let result = await OCSPCheck.evaluate(chain, requester: requester, now: Self.now)
        #expect(!OCSPCheck.accepted(result))
        #expect("\(result)".contains("signature is not valid"), "\(result)")
    }

    @Test func aStaleAnswerIsRefused() async {
        let stale = Self.answering(
            .good, thisUpdate: Self.now.addingTimeInterval(-3 * 3_600),
            nextUpdate: Self.now.addingTimeInterval(-2 * 3_600 - 1))
        let result = await OCSPCheck.evaluate(chain, requester: stale, now: Self.now)
        #expect(!OCSPCheck.accepted(result))
        #expect("\(result)".contains("is in the past"), "\(result)")
        let withoutNextUpdate = Self.answering(.good, nextUpdate: nil)
        let missing = await OCSPCheck.evaluate(chain, requester: withoutNextUpdate, now: Self.now)
        #expect(!OCSPCheck.accepted(missing))
        #expect("\(missing)".contains("nextUpdate` is nil"), "\(missing)")
        // Within the verifier's leeway (an hour and a quarter), an answer just past nextUpdate still passes.
        let recent = Self.answering(
            .good, thisUpdate: Self.now.addingTimeInterval(-2 * 3_600), nextUpdate: Self.now.addingTimeInterval(-3_600))
        #expect(OCSPCheck.accepted(await OCSPCheck.evaluate(chain, requester: recent, now: Self.now)))
    }

    @Test func aNonceThatIsNotEchoedBackIsRefused() async {
        let other = Self.answering(.good) { _ in OCSPRequestMessage.randomNonce() }
        let result = await OCSPCheck.evaluate(chain, requester: other, now: Self.now)
        #expect(!OCSPCheck.accepted(result))
        #expect("\(result)".contains("nonce does not match"), "\(result)")
        let none = Self.answering(.good) { _ in nil }
        #expect(
            OCSPCheck.accepted(await OCSPCheck.evaluate(chain, requester: none, now: Self.now)),
            "a nonce may be left out")
    }

    // MARK: - Python's cryptography

    @Test(.enabled(if: PythonCryptography.available, PythonCryptography.skipMessage))
    func pythonCryptographyReadsWhatWeBuild() async throws {
        let leaf = Self.authority.leaf
        let intermediate = Self.authority.intermediate
        let id = OCSPCertificateID(certificate: leaf, issuer: intermediate, hashAlgorithm: .sha256)
        let nonce = OCSPRequestMessage.randomNonce()
        let request = try OCSPRequestMessage(certificateIDs: [id], nonce: nonce).derEncoded()
        let revokedAt = Date(timeIntervalSince1970: 1_789_990_000)
        let response = try OCSPResponseMessage.signed(
            answers: [
                OCSPSingleAnswer(
                    certificateID: id, status: .revoked(at: revokedAt), thisUpdate: Self.now,
                    nextUpdate: Self.now.addingTimeInterval(3_600))
            ],
            producedAt: Self.now, nonce: nonce, responder: intermediate,
            key: Certificate.PrivateKey(Self.authority.intermediateKey))
        let script = """
            import sys
            from cryptography import x509
            from cryptography.x509 import ocsp
            from cryptography.hazmat.primitives.asymmetric import ec
            request = ocsp.load_der_ocsp_request(bytes.fromhex(sys.argv[1]))
            nonce = request.extensions.get_extension_for_class(x509.OCSPNonce).value.nonce
            print("request", request.hash_algorithm.name, format(request.serial_number, "x"), request.issuer_key_hash.hex(), nonce.hex())
            response = ocsp.load_der_ocsp_response(bytes.fromhex(sys.argv[2]))
            issuer = x509.load_der_x509_certificate(bytes.fromhex(sys.argv[3]))
            issuer.public_key().verify(response.signature, response.tbs_response_bytes, ec.ECDSA(response.signature_hash_algorithm))
            echoed = response.extensions.get_extension_for_class(x509.OCSPNonce).value.nonce
            print("response", response.response_status.name, response.certificate_status.name, format(response.serial_number, "x"),
                  response.hash_algorithm.name, response.signature_hash_algorithm.name, response.responder_key_hash.hex(),
                  int(response.revocation_time_utc.timestamp()), int(response.this_update_utc.timestamp()),
                  int(response.next_update_utc.timestamp()), echoed.hex())
            print("unsuccessful", ocsp.load_der_ocsp_response(bytes.fromhex(sys.argv[4])).response_status.name)
            """
        let result = try await Python.run(
            script,
            arguments: [
                request.hex, response.hex, intermediate.derBytes.hex,
                OCSPResponseMessage.unsuccessful(.malformedRequest).hex,
            ])
        #expect(result.status == 0, "\(result.output)")
        let serial = leaf.serialNumber.bytes.map { String(format: "%02x", $0) }.joined()
            .replacingOccurrences(of: "^0+", with: "", options: .regularExpression)
        let keyHash = Array(Insecure.SHA1.hash(data: intermediate.publicKey.subjectPublicKeyInfoBytes)).hex
        #expect(
            result.output.contains("request sha256 \(serial) \(id.issuerKeyHash.hex) \(Array(nonce.dropFirst(2)).hex)"),
            "\(result.output)")
        #expect(
            result.output.contains(
                "response SUCCESSFUL REVOKED \(serial) sha256 sha384 \(keyHash) 1789990000 1790000000 1790003600 \(Array(nonce.dropFirst(2)).hex)"
            ),
            "\(result.output)")
        #expect(result.output.contains("unsuccessful MALFORMED_REQUEST"), "\(result.output)")
    }
}
