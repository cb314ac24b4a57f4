public import SwiftASN1

/// A CMS `Attribute`: a type and its values, as found in a signer's signed or unsigned attributes.
///
/// `Attribute ::= SEQUENCE { attrType OBJECT IDENTIFIER, attrValues SET OF ANY }`.
public struct CMSAttribute: Hashable, Sendable, DERSerializable {
    /// The attribute type.
    public var type: ASN1ObjectIdentifier
    /// The values, in the order found.
    public var values: [ASN1Any]

    /// Creates an attribute.
    public init(type: ASN1ObjectIdentifier, values: [ASN1Any]) {
        self.type = type
        self.values = values
    }

    /// `contentType` (1.2.840.113549.1.9.3): the type of the signed content.
    public static let contentTypeOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 3]
    /// `messageDigest` (1.2.840.113549.1.9.4): the digest of the signed content.
    public static let messageDigestOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 4]

    /// Reads an attribute from a BER or DER node.
    init(berNode node: ASN1Node) throws {
        self = try BER.sequence(node, identifier: .sequence) { nodes in
            let type = try ASN1ObjectIdentifier(berEncoded: &nodes)
            guard let setNode = nodes.next(), setNode.identifier == .set,
                case .constructed(let children) = setNode.content
            else {
                throw ASN1Error.invalidASN1Object(reason: "an Attribute's values must be a SET")
            }
            guard nodes.next() == nil else {
                throw ASN1Error.invalidASN1Object(reason: "an Attribute has exactly a type and a SET of values")
            }
            return CMSAttribute(type: type, values: children.map { ASN1Any(berEncoded: $0) })
        }
    }

    /// Writes the attribute as DER; the values keep their order.
    public func serialize(into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(type)
            try coder.appendConstructedNode(identifier: .set) { coder in
                for value in values {
                    try coder.serialize(value)
                }
            }
        }
    }
}
