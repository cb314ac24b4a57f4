public import SwiftASN1

/// One signer of a CMS SignedData: who signed, with which algorithms, and the signature.
///
/// ```
/// SignerInfo ::= SEQUENCE {
///   version CMSVersion, sid SignerIdentifier, digestAlgorithm DigestAlgorithmIdentifier,
///   signedAttrs [0] IMPLICIT SET OF Attribute OPTIONAL,
///   signatureAlgorithm SignatureAlgorithmIdentifier, signature OCTET STRING,
///   unsignedAttrs [1] IMPLICIT SET OF Attribute OPTIONAL }
/// ```
///
/// App receipts normally have no signed attributes: the signature then covers the content itself.
public struct CMSSignerInfo: Hashable, Sendable, DERSerializable {
    /// 1 when ``signerIdentifier`` is an issuer and serial number, 3 when it is a key identifier.
    public var version: Int
    /// The certificate that made the signature.
    public var signerIdentifier: CMSSignerIdentifier
    /// The hash algorithm applied to the content.
    public var digestAlgorithm: CMSAlgorithmIdentifier
    /// Signed attributes; when present the signature covers their DER instead of the content.
    public var signedAttributes: [CMSAttribute]?
    /// The signature algorithm. Real receipts write bare `rsaEncryption`.
    public var signatureAlgorithm: CMSAlgorithmIdentifier
    /// The signature: PKCS#1 v1.5 bytes for RSA, a DER `ECDSA-Sig-Value` for ECDSA.
    public var signature: [UInt8]
    /// Unsigned attributes, kept so that a parsed value serializes back unchanged.
    public var unsignedAttributes: [CMSAttribute]?

    /// Creates a signer info.
    public init(
        version: Int = 1, signerIdentifier: CMSSignerIdentifier, digestAlgorithm: CMSAlgorithmIdentifier,
        signedAttributes: [CMSAttribute]? = nil, signatureAlgorithm: CMSAlgorithmIdentifier, signature: [UInt8],
        unsignedAttributes: [CMSAttribute]? = nil
    ) {
        self.version = version
        self.signerIdentifier = signerIdentifier
        self.digestAlgorithm = digestAlgorithm
        self.signedAttributes = signedAttributes
        self.signatureAlgorithm = signatureAlgorithm
        self.signature = signature
        self.unsignedAttributes = unsignedAttributes
    }

    private static let signedAttributesTag = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
    private static let unsignedAttributesTag = ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)

    /// The bytes the signature covers when there are signed attributes: their DER as a SET OF,
    /// in the order found (RFC 5652 §5.4). `nil` when there are none.
    public var signedAttributesDER: [UInt8]? {
        guard let signedAttributes else { return nil }
        var serializer = DER.Serializer()
        try? serializer.appendConstructedNode(identifier: .set) { coder in
            for attribute in signedAttributes {
                try coder.serialize(attribute)
            }
        }
        return serializer.serializedBytes
    }

    /// The value of the `messageDigest` signed attribute, when there is exactly one.
    public var messageDigest: [UInt8]? {
        let values = signedAttributes?.filter { $0.type == CMSAttribute.messageDigestOID }.flatMap(\.values) ?? []
        guard values.count == 1, let octets = try? ASN1OctetString(berASN1Any: values[0]) else { return nil }
        return Array(octets.bytes)
    }

    /// Reads a signer info from a BER or DER node.
    init(berNode node: ASN1Node) throws {
        self = try BER.sequence(node, identifier: .sequence) { nodes in
            let version = try Int(berEncoded: &nodes)
            guard let sidNode = nodes.next() else { throw ASN1Error.invalidASN1Object(reason: "SignerInfo has no sid") }
            let signerIdentifier = try CMSSignerIdentifier(berNode: sidNode)
            guard let digestNode = nodes.next() else {
                throw ASN1Error.invalidASN1Object(reason: "SignerInfo has no digest algorithm")
            }
            let digestAlgorithm = try CMSAlgorithmIdentifier(berNode: digestNode)

            var next = nodes.next()
            var signedAttributes: [CMSAttribute]?
            if let attributesNode = next, attributesNode.identifier == Self.signedAttributesTag {
                signedAttributes = try Self.attributes(in: attributesNode)
                next = nodes.next()
            }
            guard let signatureAlgorithmNode = next else {
                throw ASN1Error.invalidASN1Object(reason: "SignerInfo has no signature algorithm")
            }
            let signatureAlgorithm = try CMSAlgorithmIdentifier(berNode: signatureAlgorithmNode)
            let signature = try ASN1OctetString(berEncoded: &nodes)

            var unsignedAttributes: [CMSAttribute]?
            if let attributesNode = nodes.next() {
                guard attributesNode.identifier == Self.unsignedAttributesTag else {
                    throw ASN1Error.unexpectedFieldType(attributesNode.identifier)
                }
                unsignedAttributes = try Self.attributes(in: attributesNode)
            }
            guard nodes.next() == nil else {
                throw ASN1Error.invalidASN1Object(reason: "SignerInfo has fields after its unsigned attributes")
            }
            return CMSSignerInfo(
                version: version, signerIdentifier: signerIdentifier, digestAlgorithm: digestAlgorithm,
                signedAttributes: signedAttributes, signatureAlgorithm: signatureAlgorithm,
                signature: Array(signature.bytes), unsignedAttributes: unsignedAttributes)
        }
    }

    private static func attributes(in node: ASN1Node) throws -> [CMSAttribute] {
        guard case .constructed(let children) = node.content else {
            throw ASN1Error.invalidASN1Object(reason: "a SET OF Attribute must be constructed")
        }
        return try children.map { try CMSAttribute(berNode: $0) }
    }

    /// Writes the signer info as DER; attributes keep their order.
    public func serialize(into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(version)
            try coder.serialize(signerIdentifier)
            try coder.serialize(digestAlgorithm)
            if let signedAttributes {
                try Self.serialize(signedAttributes, tag: Self.signedAttributesTag, into: &coder)
            }
            try coder.serialize(signatureAlgorithm)
            try coder.serialize(ASN1OctetString(contentBytes: signature[...]))
            if let unsignedAttributes {
                try Self.serialize(unsignedAttributes, tag: Self.unsignedAttributesTag, into: &coder)
            }
        }
    }

    private static func serialize(
        _ attributes: [CMSAttribute], tag: ASN1Identifier, into coder: inout DER.Serializer
    ) throws {
        try coder.appendConstructedNode(identifier: tag) { coder in
            for attribute in attributes {
                try coder.serialize(attribute)
            }
        }
    }
}
