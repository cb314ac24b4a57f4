public import SwiftASN1
public import X509

/// How a CMS signer names the certificate whose key made the signature.
///
/// `SignerIdentifier ::= CHOICE { issuerAndSerialNumber IssuerAndSerialNumber,
/// subjectKeyIdentifier [0] SubjectKeyIdentifier }`.
public enum CMSSignerIdentifier: Hashable, Sendable, DERSerializable {
    /// The certificate's issuer and serial number (version 1 signer infos, what Apple writes).
    case issuerAndSerialNumber(issuer: DistinguishedName, serialNumber: Certificate.SerialNumber)
    /// The certificate's subject key identifier (version 3 signer infos).
    case subjectKeyIdentifier([UInt8])

    /// Names `certificate` by issuer and serial number.
    public init(issuerAndSerialNumberOf certificate: Certificate) {
        self = .issuerAndSerialNumber(issuer: certificate.issuer, serialNumber: certificate.serialNumber)
    }

    /// Whether `certificate` is the one named.
    public func matches(_ certificate: Certificate) -> Bool {
        switch self {
        case .issuerAndSerialNumber(let issuer, let serialNumber):
            return certificate.issuer == issuer && certificate.serialNumber == serialNumber
        case .subjectKeyIdentifier(let identifier):
            guard let extensionValue = try? certificate.extensions.subjectKeyIdentifier else { return false }
            return Array(extensionValue.keyIdentifier) == identifier
        }
    }

    private static let subjectKeyIdentifierTag = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)

    /// Reads an identifier from a BER or DER node.
    init(berNode node: ASN1Node) throws {
        if node.identifier == Self.subjectKeyIdentifierTag {
            let octets = try ASN1OctetString(berEncoded: node, withIdentifier: Self.subjectKeyIdentifierTag)
            self = .subjectKeyIdentifier(Array(octets.bytes))
            return
        }
        self = try BER.sequence(node, identifier: .sequence) { nodes in
            guard let issuerNode = nodes.next(), let serialNode = nodes.next(), nodes.next() == nil else {
                throw ASN1Error.invalidASN1Object(
                    reason: "IssuerAndSerialNumber has exactly an issuer and a serial number")
            }
            let issuer = try DistinguishedName(derEncoded: issuerNode)
            let serial = try ArraySlice<UInt8>(derEncoded: serialNode)
            return .issuerAndSerialNumber(issuer: issuer, serialNumber: Certificate.SerialNumber(bytes: serial))
        }
    }

    /// Writes the identifier as DER.
    public func serialize(into coder: inout DER.Serializer) throws {
        switch self {
        case .issuerAndSerialNumber(let issuer, let serialNumber):
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(issuer)
                try coder.serialize(serialNumber.bytes)
            }
        case .subjectKeyIdentifier(let identifier):
            coder.appendPrimitiveNode(identifier: Self.subjectKeyIdentifierTag) { $0.append(contentsOf: identifier) }
        }
    }
}
