import Crypto
public import Foundation
import SwiftASN1
public import X509

// OCSP messages (RFC 6960) as small value types, for a responder that answers what it issued and
// for tests that look inside what a verifier sends and receives. Checking a response (signature,
// responder, freshness, nonce) is swift-certificates' `OCSPVerifierPolicy`'s job: nothing here
// verifies anything.

/// The hash function of an OCSP `CertID`.
///
/// swift-certificates' `OCSPVerifierPolicy` sends SHA-1 (RFC 5019's profile); Apple's Python
/// library (`app-store-server-library`) sends SHA-256. A responder answers in the algorithm it
/// was asked in.
public enum OCSPHashAlgorithm: Sendable {
    /// SHA-1, which RFC 5019's lightweight profile asks for.
    case sha1
    /// SHA-256, which Apple's Python library uses.
    case sha256
}

/// An OCSP `CertID`: the certificate's serial number, and hashes of its issuer's name and key.
///
/// ```
/// CertID ::= SEQUENCE {
///     hashAlgorithm   AlgorithmIdentifier,
///     issuerNameHash  OCTET STRING, -- hash of the issuer's DER-encoded name
///     issuerKeyHash   OCTET STRING, -- hash of the issuer's subjectPublicKey BIT STRING contents
///     serialNumber    CertificateSerialNumber }
/// ```
public struct OCSPCertificateID: Hashable, Sendable {
    /// The hash function of both hashes.
    public var hashAlgorithm: OCSPHashAlgorithm
    /// The hash of the issuer's DER-encoded subject name.
    public var issuerNameHash: [UInt8]
    /// The hash of the issuer's public key (the `subjectPublicKey` BIT STRING's contents).
    public var issuerKeyHash: [UInt8]
    /// The serial number of the certificate asked about.
    public var serialNumber: Certificate.SerialNumber

    /// Creates an identifier from its parts, as read from a message.
    public init(
        hashAlgorithm: OCSPHashAlgorithm, issuerNameHash: [UInt8], issuerKeyHash: [UInt8],
        serialNumber: Certificate.SerialNumber
    ) {
        self.hashAlgorithm = hashAlgorithm
        self.issuerNameHash = issuerNameHash
        self.issuerKeyHash = issuerKeyHash
        self.serialNumber = serialNumber
    }

    /// The identifier of `certificate`, issued by `issuer`, as a requester computes it.
    public init(certificate: Certificate, issuer: Certificate, hashAlgorithm: OCSPHashAlgorithm = .sha1) {
        self.init(
            hashAlgorithm: hashAlgorithm, issuerNameHash: hashAlgorithm.nameHash(of: issuer),
            issuerKeyHash: hashAlgorithm.hash(issuer.publicKey.subjectPublicKeyInfoBytes),
            serialNumber: certificate.serialNumber)
    }

    /// Whether this identifier names `certificate` as issued by `issuer`: same serial number, and
    /// the hashes of `issuer`'s name and key.
    public func identifies(_ certificate: Certificate, issuedBy issuer: Certificate) -> Bool {
        serialNumber == certificate.serialNumber && names(issuer: issuer)
    }

    /// Whether this identifier's issuer hashes are those of `issuer`, whatever the serial number.
    ///
    /// A responder uses it to tell "a certificate I never issued" (`unknown`) from "a certificate
    /// some other authority issued" (not its business).
    public func names(issuer: Certificate) -> Bool {
        issuerKeyHash == hashAlgorithm.hash(issuer.publicKey.subjectPublicKeyInfoBytes)
            && issuerNameHash == hashAlgorithm.nameHash(of: issuer)
    }
}

/// An OCSP request: the certificates asked about, and an optional nonce.
///
/// Requests are never signed here, and a signature on a request that is read is ignored, as the
/// App Store's responder does.
public struct OCSPRequestMessage: Sendable {
    /// The certificates asked about, in order.
    public var certificateIDs: [OCSPCertificateID]
    /// The value of the nonce extension (1.3.6.1.5.5.7.48.1.2), the extension's `extnValue`
    /// contents exactly as sent, if any.
    ///
    /// swift-certificates and OpenSSL put a DER OCTET STRING of random bytes there (see
    /// ``randomNonce()``); a responder echoes these bytes unchanged, so the requester's own
    /// decoding of the echo compares equal with what it sent.
    public var nonce: [UInt8]?

    /// Creates a request.
    public init(certificateIDs: [OCSPCertificateID], nonce: [UInt8]? = nil) {
        self.certificateIDs = certificateIDs
        self.nonce = nonce
    }

    /// A nonce value as swift-certificates makes one: a DER OCTET STRING of 32 random bytes.
    public static func randomNonce() -> [UInt8] {
        var random = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &random) }
        return [0x04, 0x20] + bytes
    }

    /// Reads a DER `OCSPRequest`.
    ///
    /// Fails with ``AppStoreSecurityError/Code/malformedInput`` when the bytes are not one, when
    /// it asks about no certificate, or when a `CertID` uses a hash other than SHA-1 or SHA-256.
    public init(derEncoded: [UInt8]) throws(AppStoreSecurityError) {
        do {
            self = try OCSPDER.request(DER.parse(derEncoded))
        } catch let error as AppStoreSecurityError {
            throw error
        } catch {
            throw AppStoreSecurityError(.malformedInput, "not a DER OCSP request: \(error)")
        }
        guard !certificateIDs.isEmpty else {
            throw AppStoreSecurityError(.malformedInput, "the OCSP request asks about no certificate")
        }
    }

    /// The request as DER: version 1, no requestor name, no signature; the nonce extension when
    /// ``nonce`` is set.
    public func derEncoded() throws -> [UInt8] {
        var coder = DER.Serializer()
        try OCSPDER.serialize(self, into: &coder)
        return coder.serializedBytes
    }
}

/// What a responder says about one certificate.
public enum OCSPCertificateStatus: Hashable, Sendable {
    /// Not revoked.
    case good
    /// Revoked at the given time.
    case revoked(at: Date)
    /// The responder does not know the certificate.
    case unknown
}

/// One `SingleResponse`: the certificate, its status, and the window the answer is good for.
public struct OCSPSingleAnswer: Hashable, Sendable {
    /// The certificate the answer is about, as the request named it.
    public var certificateID: OCSPCertificateID
    /// Its status.
    public var status: OCSPCertificateStatus
    /// When the status was known to be correct.
    public var thisUpdate: Date
    /// When newer information will be available; verifiers reject an answer without one, or past it.
    public var nextUpdate: Date?

    /// Creates an answer.
    public init(certificateID: OCSPCertificateID, status: OCSPCertificateStatus, thisUpdate: Date, nextUpdate: Date?) {
        self.certificateID = certificateID
        self.status = status
        self.thisUpdate = thisUpdate
        self.nextUpdate = nextUpdate
    }
}

/// An OCSP response: a status and, when successful, the signed answers.
public struct OCSPResponseMessage: Sendable {
    /// `OCSPResponseStatus`. Value 4 is not used by RFC 6960.
    public enum Status: Int, Sendable {
        /// The response carries answers.
        case successful = 0
        /// The request could not be parsed.
        case malformedRequest = 1
        /// The responder failed.
        case internalError = 2
        /// The responder cannot answer now; the client may ask again.
        case tryLater = 3
        /// The responder wants signed requests.
        case sigRequired = 5
        /// The responder will not answer this request: it does not serve this issuer, or this client.
        case unauthorized = 6
    }

    /// The response's status.
    public var status: Status
    /// The answers; empty unless ``status`` is ``Status/successful``.
    public var answers: [OCSPSingleAnswer]
    /// When the responder signed the answers; `nil` unless successful.
    public var producedAt: Date?
    /// The nonce extension's value echoed by the responder (see ``OCSPRequestMessage/nonce``), if any.
    public var nonce: [UInt8]?
    /// The SHA-1 hash of the responder's key, when the responder names itself by key.
    public var responderKeyHash: [UInt8]?
    /// The certificates the response carries (a delegated responder's certificate); often none.
    public var certificates: [Certificate]

    /// Reads a DER `OCSPResponse` without verifying anything: not the signature, not the
    /// responder, not the times (verification is swift-certificates' job).
    ///
    /// Fails with ``AppStoreSecurityError/Code/malformedInput`` when the bytes are not one, or a
    /// successful response is not a `BasicOCSPResponse`.
    public init(derEncoded: [UInt8]) throws(AppStoreSecurityError) {
        do {
            self = try OCSPDER.response(DER.parse(derEncoded))
        } catch let error as AppStoreSecurityError {
            throw error
        } catch {
            throw AppStoreSecurityError(.malformedInput, "not a DER OCSP response: \(error)")
        }
    }

    init(
        status: Status, answers: [OCSPSingleAnswer] = [], producedAt: Date? = nil, nonce: [UInt8]? = nil,
        responderKeyHash: [UInt8]? = nil, certificates: [Certificate] = []
    ) {
        self.status = status
        self.answers = answers
        self.producedAt = producedAt
        self.nonce = nonce
        self.responderKeyHash = responderKeyHash
        self.certificates = certificates
    }

    /// A successful response, signed.
    ///
    /// The `BasicOCSPResponse` (id-pkix-ocsp-basic) holds a `ResponseData` whose responder ID is
    /// by key (the SHA-1 hash of `responder`'s subjectPublicKey BIT STRING contents), `producedAt`,
    /// the answers, and the nonce extension when `nonce` is given; it is signed over the DER
    /// `ResponseData` with `key`: ecdsa-with-SHA384 for a P-384 key, ecdsa-with-SHA256 for P-256.
    /// `certificates` go into `certs` when not empty (a delegated responder's certificate).
    ///
    /// Throws ``AppStoreSecurityError/Code/invalidConfiguration`` when `key` is not `responder`'s
    /// key, or is neither P-256 nor P-384.
    public static func signed(
        answers: [OCSPSingleAnswer], producedAt: Date, nonce: [UInt8]?, responder: Certificate,
        key: Certificate.PrivateKey, certificates: [Certificate] = []
    ) throws -> [UInt8] {
        guard key.publicKey == responder.publicKey else {
            throw AppStoreSecurityError(.invalidConfiguration, "the OCSP signing key is not the responder's key")
        }
        let algorithm: Certificate.SignatureAlgorithm
        if P384.Signing.PublicKey(responder.publicKey) != nil {
            algorithm = .ecdsaWithSHA384
        } else if P256.Signing.PublicKey(responder.publicKey) != nil {
            algorithm = .ecdsaWithSHA256
        } else {
            throw AppStoreSecurityError(.invalidConfiguration, "an OCSP responder key must be P-256 or P-384")
        }
        let keyHash = Array(Insecure.SHA1.hash(data: responder.publicKey.subjectPublicKeyInfoBytes))
        var responseData = DER.Serializer()
        try OCSPDER.serializeResponseData(
            responderKeyHash: keyHash, producedAt: producedAt, answers: answers, nonce: nonce, into: &responseData)
        let signed = responseData.serializedBytes
        let signature = try key.sign(bytes: signed, signatureAlgorithm: algorithm).rawRepresentation
        var coder = DER.Serializer()
        try OCSPDER.serializeSuccessfulResponse(
            responseData: signed, algorithm: algorithm, signature: signature, certificates: certificates,
            into: &coder)
        return coder.serializedBytes
    }

    /// An unsuccessful response: only the status, no answers, no signature (RFC 6960 §2.3).
    ///
    /// ``Status/successful`` cannot stand without answers; it is written as `internalError`.
    public static func unsuccessful(_ status: Status) -> [UInt8] {
        let value = status == .successful ? Status.internalError.rawValue : status.rawValue
        // OCSPResponse ::= SEQUENCE { responseStatus ENUMERATED }
        return [0x30, 0x03, 0x0A, 0x01, UInt8(value)]
    }
}

extension OCSPHashAlgorithm {
    /// id-sha1 (1.3.14.3.2.26) and id-sha256 (2.16.840.1.101.3.4.2.1).
    var oid: ASN1ObjectIdentifier {
        switch self {
        case .sha1: [1, 3, 14, 3, 2, 26]
        case .sha256: [2, 16, 840, 1, 101, 3, 4, 2, 1]
        }
    }

    init?(oid: ASN1ObjectIdentifier) {
        switch oid {
        case OCSPHashAlgorithm.sha1.oid: self = .sha1
        case OCSPHashAlgorithm.sha256.oid: self = .sha256
        default: return nil
        }
    }

    func hash(_ bytes: some DataProtocol) -> [UInt8] {
        switch self {
        case .sha1: Array(Insecure.SHA1.hash(data: bytes))
        case .sha256: Array(SHA256.hash(data: bytes))
        }
    }

    /// The hash of the DER encoding of `issuer`'s subject.
    func nameHash(of issuer: Certificate) -> [UInt8] {
        var coder = DER.Serializer()
        // A name read from a certificate always serializes again.
        guard (try? coder.serialize(issuer.subject)) != nil else { return [] }
        return hash(coder.serializedBytes)
    }
}
