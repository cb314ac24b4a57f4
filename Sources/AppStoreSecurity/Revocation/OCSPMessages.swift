import Crypto
package import Foundation
import SwiftASN1
package import X509

// OCSP messages (RFC 6960) as small value types, visible within the package only: a revocation
// check reads the answers it got (when they expire, which certificate is revoked), and the
// sandbox's responder (AppStoreTesting) writes answers of the same types. Checking a response
// (signature, responder, freshness, nonce) is swift-certificates' `OCSPVerifierPolicy`'s job:
// nothing here verifies anything.

/// The hash function of an OCSP `CertID`.
///
/// swift-certificates' `OCSPVerifierPolicy` sends SHA-1 (RFC 5019's profile); Apple's Python
/// library (`app-store-server-library`) sends SHA-256. A responder answers in the algorithm it
/// was asked in.
package enum OCSPHashAlgorithm: Sendable {
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
package struct OCSPCertificateID: Hashable, Sendable {
    /// The hash function of both hashes.
    package var hashAlgorithm: OCSPHashAlgorithm
    /// The hash of the issuer's DER-encoded subject name.
    package var issuerNameHash: [UInt8]
    /// The hash of the issuer's public key (the `subjectPublicKey` BIT STRING's contents).
    package var issuerKeyHash: [UInt8]
    /// The serial number of the certificate asked about.
    package var serialNumber: Certificate.SerialNumber

    /// Creates an identifier from its parts, as read from a message.
    package init(
        hashAlgorithm: OCSPHashAlgorithm, issuerNameHash: [UInt8], issuerKeyHash: [UInt8],
        serialNumber: Certificate.SerialNumber
    ) {
        self.hashAlgorithm = hashAlgorithm
        self.issuerNameHash = issuerNameHash
        self.issuerKeyHash = issuerKeyHash
        self.serialNumber = serialNumber
    }

    /// The identifier of `certificate`, issued by `issuer`, as a requester computes it.
    package init(certificate: Certificate, issuer: Certificate, hashAlgorithm: OCSPHashAlgorithm = .sha1) {
        self.init(
            hashAlgorithm: hashAlgorithm, issuerNameHash: hashAlgorithm.nameHash(of: issuer),
            issuerKeyHash: hashAlgorithm.hash(issuer.publicKey.subjectPublicKeyInfoBytes),
            serialNumber: certificate.serialNumber)
    }

    /// Whether this identifier names `certificate` as issued by `issuer`: same serial number, and
    /// the hashes of `issuer`'s name and key.
    package func identifies(_ certificate: Certificate, issuedBy issuer: Certificate) -> Bool {
        serialNumber == certificate.serialNumber && names(issuer: issuer)
    }

    /// Whether this identifier's issuer hashes are those of `issuer`, whatever the serial number.
    ///
    /// A responder uses it to tell "a certificate I never issued" (`unknown`) from "a certificate
    /// some other authority issued" (not its business).
    package func names(issuer: Certificate) -> Bool {
        issuerKeyHash == hashAlgorithm.hash(issuer.publicKey.subjectPublicKeyInfoBytes)
            && issuerNameHash == hashAlgorithm.nameHash(of: issuer)
    }
}

/// What a responder says about one certificate.
package enum OCSPCertificateStatus: Hashable, Sendable {
    /// Not revoked.
    case good
    /// Revoked at the given time.
    case revoked(at: Date)
    /// The responder does not know the certificate.
    case unknown
}

/// One `SingleResponse`: the certificate, its status, and the window the answer is good for.
package struct OCSPSingleAnswer: Hashable, Sendable {
    /// The certificate the answer is about, as the request named it.
    package var certificateID: OCSPCertificateID
    /// Its status.
    package var status: OCSPCertificateStatus
    /// When the status was known to be correct.
    package var thisUpdate: Date
    /// When newer information will be available; verifiers reject an answer without one, or past it.
    package var nextUpdate: Date?

    /// Creates an answer.
    package init(certificateID: OCSPCertificateID, status: OCSPCertificateStatus, thisUpdate: Date, nextUpdate: Date?) {
        self.certificateID = certificateID
        self.status = status
        self.thisUpdate = thisUpdate
        self.nextUpdate = nextUpdate
    }
}

/// An OCSP response: a status and, when successful, the signed answers.
package struct OCSPResponseMessage: Sendable {
    /// `OCSPResponseStatus`. Value 4 is not used by RFC 6960.
    package enum Status: Int, Sendable {
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
    package var status: Status
    /// The answers; empty unless ``status`` is ``Status/successful``.
    package var answers: [OCSPSingleAnswer]
    /// When the responder signed the answers; `nil` unless successful.
    package var producedAt: Date?
    /// The nonce extension's value echoed by the responder (the request's value, unchanged), if any.
    package var nonce: [UInt8]?
    /// The SHA-1 hash of the responder's key, when the responder names itself by key.
    package var responderKeyHash: [UInt8]?
    /// The certificates the response carries (a delegated responder's certificate); often none.
    package var certificates: [Certificate]

    /// Reads a DER `OCSPResponse` without verifying anything: not the signature, not the
    /// responder, not the times (verification is swift-certificates' job).
    ///
    /// Fails with ``AppStoreSecurityError/Code/malformedInput`` when the bytes are not one, or a
    /// successful response is not a `BasicOCSPResponse`.
    package init(derEncoded: [UInt8]) throws(AppStoreSecurityError) {
        self = try OCSPDER.parse(derEncoded, as: "OCSP response", OCSPDER.response)
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
}

extension OCSPHashAlgorithm {
    /// id-sha1 (1.3.14.3.2.26) and id-sha256 (2.16.840.1.101.3.4.2.1).
    package var oid: ASN1ObjectIdentifier {
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
