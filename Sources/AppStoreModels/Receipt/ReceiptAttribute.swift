public import Foundation
import SwiftASN1

/// One `ReceiptAttribute` of an app receipt payload, exactly as it was found.
///
/// Apple's payload is `SET OF ReceiptAttribute`, where
/// `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`. The value
/// usually holds the DER encoding of a string, date or integer, but some types hold raw bytes. The
/// models keep attributes they do not interpret in this form, so that nothing Apple wrote is lost
/// when a parsed payload is serialized again.
public struct ReceiptAttribute: Codable, Hashable, Sendable {
    /// The attribute type: 2 is the bundle ID, 17 an in-app purchase, 1703 a transaction ID, and so on.
    public var type: Int
    /// Apple's version of the attribute. Usually 1; readers ignore it.
    public var version: Int
    /// The contents of the `value` OCTET STRING.
    public var value: Data

    /// Creates an attribute.
    public init(type: Int, version: Int = 1, value: Data) {
        self.type = type
        self.version = version
        self.value = value
    }

    private enum CodingKeys: String, CodingKey {
        case type
        case version
        case value
    }

    /// The text of a value holding a DER UTF8String, IA5String or PrintableString; `nil` for any other value.
    ///
    /// This is how the transaction ID (1703) and the other string attributes are read.
    public var stringValue: String? {
        try? ReceiptValueCoding.decodeString(value, type: type)
    }

    /// Reads every attribute of a BER or DER encoded `SET OF ReceiptAttribute`, in the order found.
    ///
    /// Use this to look at a payload, or at the value of a type-17 attribute, attribute by attribute.
    ///
    /// - Throws: ``ReceiptPayloadError`` when the bytes are not such a set.
    public static func attributes(inSet bytes: some Collection<UInt8>) throws(ReceiptPayloadError) -> [ReceiptAttribute]
    {
        let node: ASN1Node
        do { node = try BER.parse(Array(bytes)) } catch {
            throw ReceiptPayloadError("the payload is not BER: \(error)")
        }
        return try attributes(inSet: node)
    }

    static func attributes(inSet node: ASN1Node) throws(ReceiptPayloadError) -> [ReceiptAttribute] {
        guard node.identifier == .set, case .constructed(let children) = node.content else {
            throw ReceiptPayloadError("the payload is not a SET OF ReceiptAttribute (found tag \(node.identifier))")
        }
        var result: [ReceiptAttribute] = []
        for child in children {
            result.append(try ReceiptAttribute(node: child))
        }
        return result
    }

    init(node: ASN1Node) throws(ReceiptPayloadError) {
        guard node.identifier == .sequence, case .constructed(let children) = node.content else {
            throw ReceiptPayloadError("a ReceiptAttribute is not a SEQUENCE (found tag \(node.identifier))")
        }
        var fields = children.makeIterator()
        guard let typeNode = fields.next(), let versionNode = fields.next(), let valueNode = fields.next(),
            fields.next() == nil
        else {
            throw ReceiptPayloadError("a ReceiptAttribute must have exactly type, version and value")
        }
        let type = try ReceiptValueCoding.integer(in: typeNode, what: "an attribute type")
        let version = try ReceiptValueCoding.integer(in: versionNode, what: "the version of attribute \(type)")
        guard let smallType = Int(exactly: type), let smallVersion = Int(exactly: version) else {
            throw ReceiptPayloadError("attribute type \(type) or version \(version) is out of range")
        }
        let octets: ASN1OctetString
        do { octets = try ASN1OctetString(berEncoded: valueNode) } catch {
            throw ReceiptPayloadError("the value of attribute \(type) is not an OCTET STRING: \(error)")
        }
        self.init(type: smallType, version: smallVersion, value: Data(octets.bytes))
    }

    /// Writes the attribute as a DER SEQUENCE.
    func serialize(into serializer: inout DER.Serializer) {
        serializer.appendConstructedNode(identifier: .sequence) { inner in
            ReceiptValueCoding.appendInteger(Int64(type), to: &inner)
            ReceiptValueCoding.appendInteger(Int64(version), to: &inner)
            inner.appendPrimitiveNode(identifier: .octetString) { $0.append(contentsOf: value) }
        }
    }

    /// Writes `attributes` as a DER `SET OF ReceiptAttribute`, in the order given.
    ///
    /// The order is kept rather than sorted by encoding: in-app purchases must come back in the
    /// order they were written, and readers accept any order.
    static func serializeSet(_ attributes: [ReceiptAttribute]) -> [UInt8] {
        var serializer = DER.Serializer()
        serializer.appendConstructedNode(identifier: .set) { inner in
            for attribute in attributes {
                attribute.serialize(into: &inner)
            }
        }
        return serializer.serializedBytes
    }
}
