import Foundation
import SwiftASN1

/// How Apple encodes values inside a `ReceiptAttribute`'s OCTET STRING: the DER of a UTF8String,
/// IA5String or INTEGER, dates as RFC 3339 text in an IA5String, and an empty string for "absent".
enum ReceiptValueCoding {
    // MARK: Reading

    /// The value of an INTEGER node, read as two's complement; at most 8 content bytes.
    static func integer(in node: ASN1Node, what: String) throws(ReceiptPayloadError) -> Int64 {
        guard node.identifier == .integer, case .primitive(let bytes) = node.content else {
            throw ReceiptPayloadError("\(what) is not an INTEGER (found tag \(node.identifier))")
        }
        guard let first = bytes.first, bytes.count <= 8 else {
            throw ReceiptPayloadError("\(what) is an INTEGER of \(bytes.count) bytes; expected 1 to 8")
        }
        var value: Int64 = first >= 0x80 ? -1 : 0
        for byte in bytes {
            value = (value << 8) | Int64(byte)
        }
        return value
    }

    /// Parses the inner DER (BER tolerated) of an attribute value as one node.
    static func innerNode(_ value: Data, type: Int) throws(ReceiptPayloadError) -> ASN1Node {
        do { return try BER.parse(Array(value)) } catch {
            throw ReceiptPayloadError("the value of attribute \(type) is not an ASN.1 value: \(error)")
        }
    }

    /// The text of a UTF8String, IA5String or PrintableString value.
    static func decodeString(_ value: Data, type: Int) throws(ReceiptPayloadError) -> String {
        let node = try innerNode(value, type: type)
        guard [.utf8String, .ia5String, .printableString].contains(node.identifier),
            case .primitive(let bytes) = node.content
        else {
            throw ReceiptPayloadError("attribute \(type) does not hold a string (found tag \(node.identifier))")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ReceiptPayloadError("attribute \(type) holds a string that is not valid UTF-8")
        }
        return text
    }

    /// A string value where an empty string means absent.
    static func decodeOptionalString(_ value: Data, type: Int) throws(ReceiptPayloadError) -> String? {
        let text = try decodeString(value, type: type)
        return text.isEmpty ? nil : text
    }

    /// An INTEGER value.
    static func decodeInteger(_ value: Data, type: Int) throws(ReceiptPayloadError) -> Int64 {
        try integer(in: innerNode(value, type: type), what: "attribute \(type)")
    }

    /// An INTEGER value used as a flag: 0 is `false`, anything else `true`.
    static func decodeFlag(_ value: Data, type: Int) throws(ReceiptPayloadError) -> Bool {
        try decodeInteger(value, type: type) != 0
    }

    /// A date in a string value (see `ReceiptDate`); an empty string, or an attribute with no value
    /// at all, means absent rather than malformed.
    static func decodeDate(_ value: Data, type: Int) throws(ReceiptPayloadError) -> Date? {
        guard !value.isEmpty, let text = try decodeOptionalString(value, type: type) else { return nil }
        guard let date = ReceiptDate.parse(text) else {
            throw ReceiptPayloadError("attribute \(type) holds \"\(text)\", which is not an RFC 3339 date or one of the older receipt date forms")
        }
        return date
    }

    // MARK: Writing

    /// Appends a DER INTEGER.
    static func appendInteger(_ value: Int64, to serializer: inout DER.Serializer) {
        // Serialising a fixed-width integer cannot fail.
        try? serializer.serialize(value)
    }

    /// The DER of `text` as a string with the given tag (UTF8String or IA5String).
    static func encodeString(_ text: String, identifier: ASN1Identifier = .utf8String) -> Data {
        var serializer = DER.Serializer()
        serializer.appendPrimitiveNode(identifier: identifier) { $0.append(contentsOf: Array(text.utf8)) }
        return Data(serializer.serializedBytes)
    }

    /// The DER of an INTEGER.
    static func encodeInteger(_ value: Int64) -> Data {
        var serializer = DER.Serializer()
        appendInteger(value, to: &serializer)
        return Data(serializer.serializedBytes)
    }

    /// The DER of a flag: INTEGER 1 or 0.
    static func encodeFlag(_ value: Bool) -> Data {
        encodeInteger(value ? 1 : 0)
    }

    /// The DER of a date: an IA5String with RFC 3339 text.
    static func encodeDate(_ date: Date) -> Data {
        encodeString(ReceiptDate.format(date), identifier: .ia5String)
    }
}
