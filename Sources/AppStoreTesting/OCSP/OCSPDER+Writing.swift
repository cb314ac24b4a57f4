import AppStoreSecurity
import Foundation
import SwiftASN1
import X509

// Writing OCSP messages (RFC 6960 §4.1 and §4.2) with swift-asn1, for the sandbox's responder and
// for tests. Reading them is AppStoreSecurity's (`OCSPDER`), which a revocation check needs.

extension OCSPDER {
    /// Writes the hash algorithm with NULL parameters, as OpenSSL and Python's `cryptography` do;
    /// swift-certificates reads both forms as the same algorithm.
    static func serialize(_ id: OCSPCertificateID, into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(id.hashAlgorithm.oid)
                try coder.serialize(ASN1Null())
            }
            try coder.serialize(ASN1OctetString(contentBytes: id.issuerNameHash[...]))
            try coder.serialize(ASN1OctetString(contentBytes: id.issuerKeyHash[...]))
            try coder.serialize(id.serialNumber.bytes)
        }
    }

    /// Writes the nonce extension, explicitly tagged `[number]` (2 in a request, 1 in a response).
    static func serializeNonce(_ nonce: [UInt8], tag number: UInt, into coder: inout DER.Serializer) throws {
        try coder.serialize(explicitlyTaggedWithTagNumber: number, tagClass: .contextSpecific) { coder in
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(Certificate.Extension(oid: nonceOID, critical: false, value: nonce[...]))
            }
        }
    }

    /// Writes a `ResponseData`: the responder by key, `producedAt`, the answers and the nonce.
    static func serializeResponseData(
        responderKeyHash: [UInt8], producedAt: Date, answers: [OCSPSingleAnswer], nonce: [UInt8]?,
        into coder: inout DER.Serializer
    ) throws {
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(explicitlyTaggedWithTagNumber: 2, tagClass: .contextSpecific) { coder in
                try coder.serialize(ASN1OctetString(contentBytes: responderKeyHash[...]))
            }
            try coder.serialize(OCSPTime.generalizedTime(producedAt))
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                for answer in answers { try serialize(answer, into: &coder) }
            }
            if let nonce { try serializeNonce(nonce, tag: 1, into: &coder) }
        }
    }

    /// Writes one `SingleResponse`.
    static func serialize(_ answer: OCSPSingleAnswer, into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            try serialize(answer.certificateID, into: &coder)
            switch answer.status {
            case .good: ASN1Null().serialize(into: &coder, withIdentifier: tag(0))
            case .revoked(let date):
                try coder.appendConstructedNode(identifier: tag(1)) { coder in
                    try coder.serialize(OCSPTime.generalizedTime(date))
                }
            case .unknown: ASN1Null().serialize(into: &coder, withIdentifier: tag(2))
            }
            try coder.serialize(OCSPTime.generalizedTime(answer.thisUpdate))
            if let nextUpdate = answer.nextUpdate {
                try coder.serialize(
                    OCSPTime.generalizedTime(nextUpdate), explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific)
            }
        }
    }

    /// Writes a successful `OCSPResponse` around a signed `BasicOCSPResponse`.
    static func serializeSuccessfulResponse(
        responseData: [UInt8], algorithm: Certificate.SignatureAlgorithm, signature: [UInt8],
        certificates: [Certificate], into coder: inout DER.Serializer
    ) throws {
        var basic = DER.Serializer()
        try basic.appendConstructedNode(identifier: .sequence) { coder in
            coder.serializeRawBytes(responseData)
            // ECDSA signature algorithms have no parameters (RFC 5758 §3.2).
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(algorithm == .ecdsaWithSHA384 ? ecdsaWithSHA384 : ecdsaWithSHA256)
            }
            try coder.serialize(ASN1BitString(bytes: signature[...]))
            if !certificates.isEmpty {
                try coder.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { coder in
                    try coder.serializeSequenceOf(certificates)
                }
            }
        }
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            try OCSPResponseMessage.Status.successful.rawValue.serialize(into: &coder, withIdentifier: .enumerated)
            try coder.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { coder in
                try coder.appendConstructedNode(identifier: .sequence) { coder in
                    try coder.serialize(basicResponseOID)
                    try coder.serialize(ASN1OctetString(contentBytes: basic.serializedBytes[...]))
                }
            }
        }
    }

    static let ecdsaWithSHA256: ASN1ObjectIdentifier = [1, 2, 840, 10045, 4, 3, 2]
    static let ecdsaWithSHA384: ASN1ObjectIdentifier = [1, 2, 840, 10045, 4, 3, 3]
}

extension OCSPTime {
    /// `date`, rounded down to the second.
    static func generalizedTime(_ date: Date) throws -> GeneralizedTime {
        let whole = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: whole)
        return try GeneralizedTime(
            year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1, hours: parts.hour ?? 0,
            minutes: parts.minute ?? 0, seconds: parts.second ?? 0, fractionalSeconds: 0)
    }
}
