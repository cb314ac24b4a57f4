public import SwiftASN1
public import X509

/// A CMS (PKCS#7) SignedData wrapped in its ContentInfo: the container of an app receipt.
///
/// ```
/// ContentInfo ::= SEQUENCE { contentType OBJECT IDENTIFIER, content [0] EXPLICIT SignedData }
/// SignedData ::= SEQUENCE {
///   version CMSVersion, digestAlgorithms SET OF DigestAlgorithmIdentifier,
///   encapContentInfo SEQUENCE { eContentType OBJECT IDENTIFIER, eContent [0] EXPLICIT OCTET STRING OPTIONAL },
///   certificates [0] IMPLICIT SET OF Certificate OPTIONAL, crls [1] IMPLICIT … OPTIONAL,
///   signerInfos SET OF SignerInfo }
/// ```
///
/// Parsing accepts BER, as Apple and Xcode write it: indefinite lengths, and the content as a
/// constructed OCTET STRING whose segments are joined. Serializing writes DER, keeping the order
/// of certificates and signers. Only what receipts use is modelled: revocation lists are skipped,
/// and certificate choices other than X.509 certificates are ignored.
public struct CMSSignedData: Hashable, Sendable {
    /// The SignedData version: 1 for receipts.
    public var version: Int
    /// The digest algorithms of all signers.
    public var digestAlgorithms: [CMSAlgorithmIdentifier]
    /// The type of the signed content: `pkcs7-data` for receipts.
    public var contentType: ASN1ObjectIdentifier
    /// The signed content (the OCTET STRING's bytes, segments joined); `nil` for a detached signature.
    public var content: [UInt8]?
    /// The embedded certificates, in the order found.
    public var certificates: [Certificate]
    /// The signers.
    public var signerInfos: [CMSSignerInfo]

    /// Creates a SignedData.
    public init(
        version: Int = 1, digestAlgorithms: [CMSAlgorithmIdentifier], contentType: ASN1ObjectIdentifier = Self.dataOID,
        content: [UInt8]?, certificates: [Certificate], signerInfos: [CMSSignerInfo]
    ) {
        self.version = version
        self.digestAlgorithms = digestAlgorithms
        self.contentType = contentType
        self.content = content
        self.certificates = certificates
        self.signerInfos = signerInfos
    }

    /// `pkcs7-signedData` (1.2.840.113549.1.7.2), the ContentInfo type of a receipt.
    public static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]
    /// `pkcs7-data` (1.2.840.113549.1.7.1), the type of a receipt's signed content.
    public static let dataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]

    private static let tag0 = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
    private static let tag1 = ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)

    /// Reads a ContentInfo holding a SignedData from BER or DER bytes.
    ///
    /// - Throws: an `ASN1Error` or `CertificateError` saying where the structure is wrong.
    public init(berEncoded bytes: [UInt8]) throws {
        let root = try BER.parse(bytes)
        self = try BER.sequence(root, identifier: .sequence) { nodes in
            let type = try ASN1ObjectIdentifier(berEncoded: &nodes)
            guard type == Self.signedDataOID else {
                throw ASN1Error.invalidASN1Object(reason: "the ContentInfo holds \(type), not signedData")
            }
            guard let explicit = nodes.next(), explicit.identifier == Self.tag0,
                case .constructed(let inner) = explicit.content
            else {
                throw ASN1Error.invalidASN1Object(reason: "the ContentInfo has no [0] content")
            }
            var innerNodes = inner.makeIterator()
            guard let signedDataNode = innerNodes.next(), innerNodes.next() == nil, nodes.next() == nil else {
                throw ASN1Error.invalidASN1Object(reason: "the ContentInfo holds more than one value")
            }
            return try Self(signedDataNode: signedDataNode)
        }
    }

    private init(signedDataNode node: ASN1Node) throws {
        self = try BER.sequence(node, identifier: .sequence) { nodes in
            let version = try Int(berEncoded: &nodes)
            guard let digestSet = nodes.next(), digestSet.identifier == .set,
                case .constructed(let digestNodes) = digestSet.content
            else {
                throw ASN1Error.invalidASN1Object(reason: "SignedData has no SET of digest algorithms")
            }
            let digestAlgorithms = try digestNodes.map { try CMSAlgorithmIdentifier(berNode: $0) }
            guard let encapsulated = nodes.next() else {
                throw ASN1Error.invalidASN1Object(reason: "SignedData has no encapsulated content")
            }
            let (contentType, content) = try Self.encapsulatedContent(encapsulated)

            var next = nodes.next()
            var certificates: [Certificate] = []
            if let node = next, node.identifier == Self.tag0 {
                certificates = try Self.certificates(in: node)
                next = nodes.next()
            }
            if let node = next, node.identifier == Self.tag1 {
                next = nodes.next()
            }
            guard let signerSet = next, signerSet.identifier == .set,
                case .constructed(let signerNodes) = signerSet.content
            else {
                throw ASN1Error.invalidASN1Object(reason: "SignedData has no SET of signer infos")
            }
            let signerInfos = try signerNodes.map { try CMSSignerInfo(berNode: $0) }
            guard nodes.next() == nil else {
                throw ASN1Error.invalidASN1Object(reason: "SignedData has fields after its signer infos")
            }
            return CMSSignedData(
                version: version, digestAlgorithms: digestAlgorithms, contentType: contentType, content: content,
                certificates: certificates, signerInfos: signerInfos)
        }
    }

    private static func encapsulatedContent(_ node: ASN1Node) throws -> (ASN1ObjectIdentifier, [UInt8]?) {
        try BER.sequence(node, identifier: .sequence) { nodes in
            let type = try ASN1ObjectIdentifier(berEncoded: &nodes)
            guard let explicit = nodes.next() else { return (type, nil) }
            guard explicit.identifier == tag0, case .constructed(let inner) = explicit.content else {
                throw ASN1Error.unexpectedFieldType(explicit.identifier)
            }
            var innerNodes = inner.makeIterator()
            guard let octetNode = innerNodes.next(), innerNodes.next() == nil, nodes.next() == nil else {
                throw ASN1Error.invalidASN1Object(reason: "eContent must hold exactly one OCTET STRING")
            }
            // A constructed OCTET STRING (Xcode writes one) is read as the join of its segments.
            let octets = try ASN1OctetString(berEncoded: octetNode)
            return (type, Array(octets.bytes))
        }
    }

    private static func certificates(in node: ASN1Node) throws -> [Certificate] {
        guard case .constructed(let children) = node.content else {
            throw ASN1Error.invalidASN1Object(reason: "the certificates field must be constructed")
        }
        // Other CertificateChoices (attribute and extended certificates) are tagged; receipts have none.
        return try children.filter { $0.identifier == .sequence }.map {
            try Certificate(derEncoded: Array($0.encodedBytes))
        }
    }

    /// The ContentInfo as DER bytes.
    public func serializedDER() throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(Self.signedDataOID)
            try coder.appendConstructedNode(identifier: Self.tag0) { coder in
                try serializeSignedData(into: &coder)
            }
        }
        return serializer.serializedBytes
    }

    private func serializeSignedData(into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(version)
            try coder.serializeSetOf(digestAlgorithms)
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(contentType)
                if let content {
                    try coder.appendConstructedNode(identifier: Self.tag0) { coder in
                        try coder.serialize(ASN1OctetString(contentBytes: content[...]))
                    }
                }
            }
            if !certificates.isEmpty {
                try coder.appendConstructedNode(identifier: Self.tag0) { coder in
                    for certificate in certificates {
                        try coder.serialize(certificate)
                    }
                }
            }
            try coder.appendConstructedNode(identifier: .set) { coder in
                for signerInfo in signerInfos {
                    try coder.serialize(signerInfo)
                }
            }
        }
    }
}
