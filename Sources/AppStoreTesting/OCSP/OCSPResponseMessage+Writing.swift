package import AppStoreSecurity
import Crypto
import Foundation
import SwiftASN1
package import X509

/// Answers as a responder writes them: signed successful responses and bare refusals.
extension OCSPResponseMessage {
    /// A successful response, signed.
    ///
    /// The `BasicOCSPResponse` (id-pkix-ocsp-basic) holds a `ResponseData` whose responder ID is
    /// by key (the SHA-1 hash of `responder`'s subjectPublicKey BIT STRING contents), `producedAt`,
    /// the answers, and the nonce extension when `nonce` is given; it is signed over the DER
    /// `ResponseData` with `key`: ecdsa-with-SHA384 for a P-384 key, ecdsa-with-SHA256 for P-256.
    /// `certificates` go into `certs` when not empty (a delegated responder's certificate).
    ///
    /// Throws `AppStoreSecurityError.Code.invalidConfiguration` when `key` is not `responder`'s
    /// key, or is neither P-256 nor P-384.
    package static func signed(
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
    /// `successful` cannot stand without answers; it is written as `internalError`.
    package static func unsuccessful(_ status: Status) -> [UInt8] {
        let value = status == .successful ? Status.internalError.rawValue : status.rawValue
        // OCSPResponse ::= SEQUENCE { responseStatus ENUMERATED }
        return [0x30, 0x03, 0x0A, 0x01, UInt8(value)]
    }
}
