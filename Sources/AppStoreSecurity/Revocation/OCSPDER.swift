import Foundation
import SwiftASN1
import X509

/// The DER of OCSP messages (RFC 6960 §4.1 and §4.2), read and written with swift-asn1.
///
/// ```
/// OCSPRequest     ::= SEQUENCE { tbsRequest TBSRequest, optionalSignature [0] EXPLICIT Signature OPTIONAL }
/// TBSRequest      ::= SEQUENCE { version [0] EXPLICIT Version DEFAULT v1,
///                                requestorName [1] EXPLICIT GeneralName OPTIONAL,
///                                requestList SEQUENCE OF Request,
///                                requestExtensions [2] EXPLICIT Extensions OPTIONAL }
/// Request         ::= SEQUENCE { reqCert CertID, singleRequestExtensions [0] EXPLICIT Extensions OPTIONAL }
///
/// OCSPResponse    ::= SEQUENCE { responseStatus ENUMERATED, responseBytes [0] EXPLICIT ResponseBytes OPTIONAL }
/// ResponseBytes   ::= SEQUENCE { responseType OBJECT IDENTIFIER, response OCTET STRING }
/// BasicOCSPResponse ::= SEQUENCE { tbsResponseData ResponseData, signatureAlgorithm AlgorithmIdentifier,
///                                  signature BIT STRING, certs [0] EXPLICIT SEQUENCE OF Certificate OPTIONAL }
/// ResponseData    ::= SEQUENCE { version [0] EXPLICIT Version DEFAULT v1, responderID ResponderID,
///                                producedAt GeneralizedTime, responses SEQUENCE OF SingleResponse,
///                                responseExtensions [1] EXPLICIT Extensions OPTIONAL }
/// ResponderID     ::= CHOICE { byName [1] Name, byKey [2] KeyHash }
/// SingleResponse  ::= SEQUENCE { certID CertID, certStatus CertStatus, thisUpdate GeneralizedTime,
///                                nextUpdate [0] EXPLICIT GeneralizedTime OPTIONAL,
///                                singleExtensions [1] EXPLICIT Extensions OPTIONAL }
/// CertStatus      ::= CHOICE { good [0] IMPLICIT NULL, revoked [1] IMPLICIT RevokedInfo, unknown [2] IMPLICIT NULL }
/// RevokedInfo     ::= SEQUENCE { revocationTime GeneralizedTime, revocationReason [0] EXPLICIT CRLReason OPTIONAL }
/// ```
enum OCSPDER {
    /// id-pkix-ocsp-nonce.
    static let nonceOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 48, 1, 2]
    /// id-pkix-ocsp-basic.
    static let basicResponseOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 48, 1, 1]

    static func tag(_ number: UInt) -> ASN1Identifier {
        ASN1Identifier(tagWithNumber: number, tagClass: .contextSpecific)
    }

    static func malformed(_ reason: String) -> ASN1Error {
        ASN1Error.invalidASN1Object(reason: reason)
    }

    // MARK: - Requests

    static func request(_ node: ASN1Node) throws -> OCSPRequestMessage {
        try DER.sequence(node, identifier: .sequence) { nodes in
            guard let tbs = nodes.next() else { throw malformed("OCSPRequest has no TBSRequest") }
            let request = try tbsRequest(tbs)
            // A signature on the request is not checked.
            _ = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { _ in () }
            return request
        }
    }

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

    // MARK: - CertID

    static func certificateID(_ node: ASN1Node) throws -> OCSPCertificateID {
        try DER.sequence(node, identifier: .sequence) { nodes in
            guard let algorithmNode = nodes.next() else { throw malformed("CertID has no hash algorithm") }
            let oid = try DER.sequence(algorithmNode, identifier: .sequence) { fields in
                let oid = try ASN1ObjectIdentifier(derEncoded: &fields)
                // Parameters: absent, or NULL (both are found in the wild for SHA-1 and SHA-256).
                if let parameters = fields.next() {
                    _ = try ASN1Null(derEncoded: parameters)
                }
                return oid
            }
            guard let algorithm = OCSPHashAlgorithm(oid: oid) else {
                throw AppStoreSecurityError(
                    .malformedInput, "a CertID uses hash \(oid); only SHA-1 and SHA-256 are answered")
            }
            let nameHash = try ASN1OctetString(derEncoded: &nodes)
            let keyHash = try ASN1OctetString(derEncoded: &nodes)
            let serial = try ArraySlice<UInt8>(derEncoded: &nodes)
            return OCSPCertificateID(
                hashAlgorithm: algorithm, issuerNameHash: Array(nameHash.bytes), issuerKeyHash: Array(keyHash.bytes),
                serialNumber: Certificate.SerialNumber(bytes: serial))
        }
    }

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

    // MARK: - Nonce

    static func nonce(in extensions: [Certificate.Extension]?) -> [UInt8]? {
        extensions?.first { $0.oid == nonceOID }.map { Array($0.value) }
    }

    static func serializeNonce(_ nonce: [UInt8], tag number: UInt, into coder: inout DER.Serializer) throws {
        try coder.serialize(explicitlyTaggedWithTagNumber: number, tagClass: .contextSpecific) { coder in
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(Certificate.Extension(oid: nonceOID, critical: false, value: nonce[...]))
            }
        }
    }

    // MARK: - Responses

    static func response(_ node: ASN1Node) throws -> OCSPResponseMessage {
        try DER.sequence(node, identifier: .sequence) { nodes in
            guard let statusNode = nodes.next() else { throw malformed("OCSPResponse has no status") }
            let value = try Int(derEncoded: statusNode, withIdentifier: .enumerated)
            guard let status = OCSPResponseMessage.Status(rawValue: value) else {
                throw malformed("OCSP response status \(value) does not exist")
            }
            let bytes = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { node in
                try DER.sequence(node, identifier: .sequence) { fields in
                    let type = try ASN1ObjectIdentifier(derEncoded: &fields)
                    let content = try ASN1OctetString(derEncoded: &fields)
                    return (type, content.bytes)
                }
            }
            guard status == .successful else {
                guard bytes == nil else { throw malformed("an unsuccessful OCSP response carries response bytes") }
                return OCSPResponseMessage(status: status)
            }
            guard let (type, content) = bytes, type == basicResponseOID else {
                throw malformed("a successful OCSP response does not carry a BasicOCSPResponse")
            }
            return try basicResponse(DER.parse(content))
        }
    }

    static func basicResponse(_ node: ASN1Node) throws -> OCSPResponseMessage {
        try DER.sequence(node, identifier: .sequence) { nodes in
            guard let dataNode = nodes.next() else { throw malformed("BasicOCSPResponse has no ResponseData") }
            var message = try responseData(dataNode)
            guard let algorithm = nodes.next(), algorithm.identifier == .sequence else {
                throw malformed("BasicOCSPResponse has no signature algorithm")
            }
            _ = try ASN1BitString(derEncoded: &nodes)
            message.certificates =
                try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) {
                    try DER.sequence(of: Certificate.self, identifier: .sequence, rootNode: $0)
                } ?? []
            return message
        }
    }

    static func responseData(_ node: ASN1Node) throws -> OCSPResponseMessage {
        try DER.sequence(node, identifier: .sequence) { nodes in
            let version = try DER.decodeDefaultExplicitlyTagged(
                &nodes, tagNumber: 0, tagClass: .contextSpecific, defaultValue: 0)
            guard version == 0 else { throw malformed("OCSP response version \(version + 1) is not supported") }
            guard let responder = nodes.next() else { throw malformed("ResponseData has no responder ID") }
            var keyHash: [UInt8]?
            switch responder.identifier {
            case tag(1): _ = try DER.explicitlyTagged(responder, tagNumber: 1, tagClass: .contextSpecific) { $0 }
            case tag(2):
                keyHash = try DER.explicitlyTagged(responder, tagNumber: 2, tagClass: .contextSpecific) {
                    Array(try ASN1OctetString(derEncoded: $0).bytes)
                }
            default: throw malformed("ResponderID is neither byName nor byKey")
            }
            let producedAt = try GeneralizedTime(derEncoded: &nodes)
            guard let list = nodes.next() else { throw malformed("ResponseData has no responses") }
            let answers = try DER.sequence(list, identifier: .sequence) { responses in
                var answers: [OCSPSingleAnswer] = []
                while let response = responses.next() { answers.append(try singleAnswer(response)) }
                return answers
            }
            let extensions = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) {
                try DER.sequence(of: Certificate.Extension.self, identifier: .sequence, rootNode: $0)
            }
            return OCSPResponseMessage(
                status: .successful, answers: answers, producedAt: OCSPTime.date(producedAt),
                nonce: nonce(in: extensions), responderKeyHash: keyHash)
        }
    }

    static func singleAnswer(_ node: ASN1Node) throws -> OCSPSingleAnswer {
        try DER.sequence(node, identifier: .sequence) { nodes in
            guard let idNode = nodes.next() else { throw malformed("SingleResponse has no CertID") }
            let id = try certificateID(idNode)
            guard let statusNode = nodes.next() else { throw malformed("SingleResponse has no status") }
            let status: OCSPCertificateStatus
            switch statusNode.identifier {
            case tag(0):
                _ = try ASN1Null(derEncoded: statusNode, withIdentifier: tag(0))
                status = .good
            case tag(1):
                status = try DER.sequence(statusNode, identifier: tag(1)) { fields in
                    let time = try GeneralizedTime(derEncoded: &fields)
                    _ = try DER.optionalExplicitlyTagged(&fields, tagNumber: 0, tagClass: .contextSpecific) { _ in () }
                    return .revoked(at: OCSPTime.date(time))
                }
            case tag(2):
                _ = try ASN1Null(derEncoded: statusNode, withIdentifier: tag(2))
                status = .unknown
            default: throw malformed("CertStatus is neither good, revoked nor unknown")
            }
            let thisUpdate = try GeneralizedTime(derEncoded: &nodes)
            let nextUpdate = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) {
                try GeneralizedTime(derEncoded: $0)
            }
            _ = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { _ in () }
            return OCSPSingleAnswer(
                certificateID: id, status: status, thisUpdate: OCSPTime.date(thisUpdate),
                nextUpdate: nextUpdate.map(OCSPTime.date))
        }
    }

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

/// Dates as OCSP writes them: GeneralizedTime in UTC, whole seconds (RFC 5280 §4.1.2.5.2).
enum OCSPTime {
    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        return calendar
    }()

    /// `date`, rounded down to the second.
    static func generalizedTime(_ date: Date) throws -> GeneralizedTime {
        let whole = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: whole)
        return try GeneralizedTime(
            year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1, hours: parts.hour ?? 0,
            minutes: parts.minute ?? 0, seconds: parts.second ?? 0, fractionalSeconds: 0)
    }

    static func date(_ time: GeneralizedTime) -> Date {
        let parts = DateComponents(
            year: time.year, month: time.month, day: time.day, hour: time.hours, minute: time.minutes,
            second: time.seconds)
        let whole = calendar.date(from: parts) ?? Date(timeIntervalSince1970: 0)
        return whole.addingTimeInterval(time.fractionalSeconds)
    }
}
