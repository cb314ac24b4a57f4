import Foundation
import SwiftASN1
import X509

/// The DER of OCSP messages (RFC 6960 §4.1 and §4.2), read with swift-asn1: the responses a
/// revocation check gets back, and the `CertID`s and nonces both kinds of message carry. Writing
/// messages is a responder's job, and lives with the sandbox's responder in AppStoreTesting.
///
/// ```
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
package enum OCSPDER {
    /// id-pkix-ocsp-nonce.
    package static let nonceOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 48, 1, 2]
    /// id-pkix-ocsp-basic.
    package static let basicResponseOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 48, 1, 1]

    /// `bytes` read as DER by `read`; a failure is ``AppStoreSecurityError/Code/malformedInput``
    /// saying the bytes are not `what` (an `AppStoreSecurityError` of `read` passes as it is).
    package static func parse<T>(
        _ bytes: [UInt8], as what: String, _ read: (ASN1Node) throws -> T
    ) throws(AppStoreSecurityError) -> T {
        do {
            return try read(DER.parse(bytes))
        } catch let error as AppStoreSecurityError {
            throw error
        } catch {
            throw AppStoreSecurityError(.malformedInput, "not a DER \(what): \(error)")
        }
    }

    /// The context-specific tag `[number]`.
    package static func tag(_ number: UInt) -> ASN1Identifier {
        ASN1Identifier(tagWithNumber: number, tagClass: .contextSpecific)
    }

    /// The error for bytes that are DER but not the OCSP structure expected.
    package static func malformed(_ reason: String) -> ASN1Error {
        ASN1Error.invalidASN1Object(reason: reason)
    }

    // MARK: - CertID

    /// Reads a `CertID`; a hash other than SHA-1 or SHA-256 is refused.
    package static func certificateID(_ node: ASN1Node) throws -> OCSPCertificateID {
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

    // MARK: - Nonce

    /// The nonce extension's value among `extensions`, if any.
    package static func nonce(in extensions: [Certificate.Extension]?) -> [UInt8]? {
        extensions?.first { $0.oid == nonceOID }.map { Array($0.value) }
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
}

/// Dates as OCSP carries them: GeneralizedTime in UTC, whole seconds (RFC 5280 §4.1.2.5.2).
package enum OCSPTime {
    /// The Gregorian calendar in UTC, in which OCSP times are read and written.
    package static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        return calendar
    }()

    static func date(_ time: GeneralizedTime) -> Date {
        let parts = DateComponents(
            year: time.year, month: time.month, day: time.day, hour: time.hours, minute: time.minutes,
            second: time.seconds)
        let whole = calendar.date(from: parts) ?? Date(timeIntervalSince1970: 0)
        return whole.addingTimeInterval(time.fractionalSeconds)
    }
}
