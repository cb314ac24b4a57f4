import Foundation
package import AppStoreSecurity
import SwiftASN1
import X509

/// An OCSP request: the certificates asked about, and an optional nonce.
///
/// ```
/// OCSPRequest     ::= SEQUENCE { tbsRequest TBSRequest, optionalSignature [0] EXPLICIT Signature OPTIONAL }
/// TBSRequest      ::= SEQUENCE { version [0] EXPLICIT Version DEFAULT v1,
///                                requestorName [1] EXPLICIT GeneralName OPTIONAL,
///                                requestList SEQUENCE OF Request,
///                                requestExtensions [2] EXPLICIT Extensions OPTIONAL }
/// Request         ::= SEQUENCE { reqCert CertID, singleRequestExtensions [0] EXPLICIT Extensions OPTIONAL }
/// ```
///
/// A responder reads requests, and tests write them to look at what a responder answers; a
/// verifier's own requests are written by swift-certificates. Requests are never signed here, and
/// a signature on a request that is read is ignored, as the App Store's responder does.
package struct OCSPRequestMessage: Sendable {
    /// The certificates asked about, in order.
    package var certificateIDs: [OCSPCertificateID]
    /// The value of the nonce extension (1.3.6.1.5.5.7.48.1.2), the extension's `extnValue`
    /// contents exactly as sent, if any.
    ///
    /// swift-certificates and OpenSSL put a DER OCTET STRING of random bytes there (see
    /// ``randomNonce()``); a responder echoes these bytes unchanged, so the requester's own
    /// decoding of the echo compares equal with what it sent.
    package var nonce: [UInt8]?

    /// Creates a request.
    package init(certificateIDs: [OCSPCertificateID], nonce: [UInt8]? = nil) {
        self.certificateIDs = certificateIDs
        self.nonce = nonce
    }

    /// A nonce value as swift-certificates makes one: a DER OCTET STRING of 32 random bytes.
    package static func randomNonce() -> [UInt8] {
        var random = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &random) }
        return [0x04, 0x20] + bytes
    }

    /// Reads a DER `OCSPRequest`.
    ///
    /// Fails with `AppStoreSecurityError.Code.malformedInput` when the bytes are not one, when it
    /// asks about no certificate, or when a `CertID` uses a hash other than SHA-1 or SHA-256.
    package init(derEncoded: [UInt8]) throws(AppStoreSecurityError) {
        self = try OCSPDER.parse(derEncoded, as: "OCSP request", OCSPDER.request)
        guard !certificateIDs.isEmpty else {
            throw AppStoreSecurityError(.malformedInput, "the OCSP request asks about no certificate")
        }
    }

    /// The request as DER: version 1, no requestor name, no signature; the nonce extension when
    /// ``nonce`` is set.
    package func derEncoded() throws -> [UInt8] {
        var coder = DER.Serializer()
        try OCSPDER.serialize(self, into: &coder)
        return coder.serializedBytes
    }
}

extension OCSPDER {
    /// Reads an `OCSPRequest`; a signature on it is skipped, not checked.
    static func request(_ node: ASN1Node) throws -> OCSPRequestMessage {
        try DER.sequence(node, identifier: .sequence) { nodes in
            guard let tbs = nodes.next() else { throw malformed("OCSPRequest has no TBSRequest") }
            let request = try tbsRequest(tbs)
            // A signature on the request is not checked.
            _ = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { _ in () }
            return request
        }
    }

    /// Reads a `TBSRequest`: version 1, the `CertID`s asked about and the nonce.
    static func tbsRequest(_ node: ASN1Node) throws -> OCSPRequestMessage {
        try DER.sequence(node, identifier: .sequence) { nodes in
            let version = try DER.decodeDefaultExplicitlyTagged(
                &nodes, tagNumber: 0, tagClass: .contextSpecific, defaultValue: 0)
            guard version == 0 else { throw malformed("OCSP request version \(version + 1) is not supported") }
            _ = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { _ in () }
            guard let list = nodes.next() else { throw malformed("TBSRequest has no request list") }
            let ids = try DER.sequence(list, identifier: .sequence) { requests in
                var ids: [OCSPCertificateID] = []
                while let request = requests.next() {
                    ids.append(
                        try DER.sequence(request, identifier: .sequence) { fields in
                            guard let certID = fields.next() else { throw malformed("Request has no CertID") }
                            let id = try certificateID(certID)
                            _ = try DER.optionalExplicitlyTagged(&fields, tagNumber: 0, tagClass: .contextSpecific) {
                                _ in ()
                            }
                            return id
                        })
                }
                return ids
            }
            let extensions = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 2, tagClass: .contextSpecific) {
                try DER.sequence(of: Certificate.Extension.self, identifier: .sequence, rootNode: $0)
            }
            return OCSPRequestMessage(certificateIDs: ids, nonce: nonce(in: extensions))
        }
    }

    /// Writes an `OCSPRequest`: version 1, no requestor name, no signature.
    static func serialize(_ request: OCSPRequestMessage, into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.appendConstructedNode(identifier: .sequence) { coder in
                    for id in request.certificateIDs {
                        try coder.appendConstructedNode(identifier: .sequence) { coder in
                            try serialize(id, into: &coder)
                        }
                    }
                }
                if let nonce = request.nonce {
                    try serializeNonce(nonce, tag: 2, into: &coder)
                }
            }
        }
    }
}
