import Foundation
import SwiftASN1

/// A value type made of receipt attributes: an app receipt payload or one in-app purchase record.
///
/// The shared reading and writing below keep what the typed properties cannot hold: attributes of
/// types the model does not interpret, and the exact bytes of known attributes that Apple encoded
/// differently from how the model would (another version number, a PrintableString, an empty
/// date), so that a parsed payload serializes back to the same attributes.
protocol ReceiptAttributeRecord {
    /// The attribute types the record interprets, each with how to read and write it.
    static var fields: [ReceiptField<Self>] { get }
    /// Attributes the record does not interpret.
    var otherAttributes: [ReceiptAttribute] { get set }
    /// Known attributes as Apple encoded them, where that differs from the model's encoding.
    var originalEncodings: [ReceiptAttribute] { get set }
}

/// How one known attribute type maps to a typed property.
struct ReceiptField<Root> {
    /// The attribute type.
    let type: Int
    /// Whether every payload must carry it.
    let isRequired: Bool
    /// Decodes the value into the property. An empty string leaves an optional property `nil`.
    let read: (inout Root, Data) throws(ReceiptPayloadError) -> Void
    /// The model's encoding of the property, `nil` when the property is absent.
    let write: (Root) -> Data?
}

extension ReceiptAttributeRecord {
    /// Fills `record` from `attributes`. Repeated known types after the first, and unknown types,
    /// go to ``otherAttributes``; `handle` sees every attribute first and may claim it.
    static func read(
        _ attributes: [ReceiptAttribute], into record: inout Self, what: String,
        handle: (ReceiptAttribute, inout Self) throws(ReceiptPayloadError) -> Bool = { _, _ in false }
    ) throws(ReceiptPayloadError) {
        let fields = Dictionary(fields.map { ($0.type, $0) }, uniquingKeysWith: { first, _ in first })
        var seen = Set<Int>()
        for attribute in attributes {
            if try handle(attribute, &record) { continue }
            guard let field = fields[attribute.type], !seen.contains(attribute.type) else {
                record.otherAttributes.append(attribute)
                continue
            }
            seen.insert(attribute.type)
            try field.read(&record, attribute.value)
            if attribute.version != 1 || field.write(record) != attribute.value {
                record.originalEncodings.append(attribute)
            }
        }
        if let missing = fields.values.filter({ $0.isRequired && !seen.contains($0.type) }).map(\.type).min() {
            throw ReceiptPayloadError("\(what) has no attribute \(missing), which every receipt carries")
        }
        // Kept in the order they are written back, so that parsing a serialized record gives an equal value.
        record.otherAttributes = orderedByType(record.otherAttributes)
        record.originalEncodings = orderedByType(record.originalEncodings)
    }

    /// `attributes` ordered by type; attributes of the same type keep their order.
    static func orderedByType(_ attributes: [ReceiptAttribute]) -> [ReceiptAttribute] {
        attributes.enumerated()
            .sorted { ($0.element.type, $0.offset) < ($1.element.type, $1.offset) }
            .map(\.element)
    }

    /// The attribute the record writes for `field`: Apple's original bytes while they still decode
    /// to the current value, otherwise the model's encoding (or nothing when absent).
    func attribute(for field: ReceiptField<Self>) -> ReceiptAttribute? {
        let current = field.write(self)
        if let original = originalEncodings.first(where: { $0.type == field.type }) {
            var scratch = self
            if (try? field.read(&scratch, original.value)) != nil, field.write(scratch) == current {
                return original
            }
        }
        return current.map { ReceiptAttribute(type: field.type, version: 1, value: $0) }
    }

    /// Every attribute of the record, ordered by type; attributes of the same type keep their order.
    func allAttributes(adding extra: [ReceiptAttribute] = []) -> [ReceiptAttribute] {
        Self.orderedByType(Self.fields.compactMap { attribute(for: $0) } + extra + otherAttributes)
    }
}

/// Builders for the usual kinds of field.
enum ReceiptFields {
    static func string<Root>(
        _ type: Int, _ path: WritableKeyPath<Root, String>, identifier: StringTag = .utf8
    ) -> ReceiptField<Root> {
        ReceiptField(
            type: type, isRequired: true,
            read: { root, value throws(ReceiptPayloadError) in
                root[keyPath: path] = try ReceiptValueCoding.decodeString(value, type: type)
            },
            write: { ReceiptValueCoding.encodeString($0[keyPath: path], identifier: identifier.asn1) })
    }

    static func optionalString<Root>(
        _ type: Int, _ path: WritableKeyPath<Root, String?>, identifier: StringTag = .utf8
    ) -> ReceiptField<Root> {
        ReceiptField(
            type: type, isRequired: false,
            read: { root, value throws(ReceiptPayloadError) in
                root[keyPath: path] = try ReceiptValueCoding.decodeOptionalString(value, type: type)
            },
            write: { root in
                root[keyPath: path].map { ReceiptValueCoding.encodeString($0, identifier: identifier.asn1) }
            })
    }

    static func integer<Root, Value: FixedWidthInteger>(
        _ type: Int, _ path: WritableKeyPath<Root, Value?>
    ) -> ReceiptField<Root> {
        ReceiptField(
            type: type, isRequired: false,
            read: { root, value throws(ReceiptPayloadError) in
                root[keyPath: path] = try exact(ReceiptValueCoding.decodeInteger(value, type: type), type: type)
            },
            write: { root in root[keyPath: path].map { ReceiptValueCoding.encodeInteger(Int64($0)) } })
    }

    static func requiredInteger<Root, Value: FixedWidthInteger>(
        _ type: Int, _ path: WritableKeyPath<Root, Value>
    ) -> ReceiptField<Root> {
        ReceiptField(
            type: type, isRequired: true,
            read: { root, value throws(ReceiptPayloadError) in
                root[keyPath: path] = try exact(ReceiptValueCoding.decodeInteger(value, type: type), type: type)
            },
            write: { ReceiptValueCoding.encodeInteger(Int64($0[keyPath: path])) })
    }

    static func flag<Root>(_ type: Int, _ path: WritableKeyPath<Root, Bool?>) -> ReceiptField<Root> {
        ReceiptField(
            type: type, isRequired: false,
            read: { root, value throws(ReceiptPayloadError) in
                root[keyPath: path] = try ReceiptValueCoding.decodeFlag(value, type: type)
            },
            write: { root in root[keyPath: path].map(ReceiptValueCoding.encodeFlag) })
    }

    static func date<Root>(_ type: Int, _ path: WritableKeyPath<Root, Date?>) -> ReceiptField<Root> {
        ReceiptField(
            type: type, isRequired: false,
            read: { root, value throws(ReceiptPayloadError) in
                root[keyPath: path] = try ReceiptValueCoding.decodeDate(value, type: type)
            },
            write: { root in root[keyPath: path].map(ReceiptValueCoding.encodeDate) })
    }

    static func requiredDate<Root>(_ type: Int, _ path: WritableKeyPath<Root, Date>) -> ReceiptField<Root> {
        ReceiptField(
            type: type, isRequired: true,
            read: { root, value throws(ReceiptPayloadError) in
                guard let date = try ReceiptValueCoding.decodeDate(value, type: type) else {
                    throw ReceiptPayloadError("attribute \(type) is empty, but a date is required")
                }
                root[keyPath: path] = date
            },
            write: { ReceiptValueCoding.encodeDate($0[keyPath: path]) })
    }

    static func bytes<Root>(_ type: Int, _ path: WritableKeyPath<Root, Data>) -> ReceiptField<Root> {
        ReceiptField(
            type: type, isRequired: true,
            read: { root, value in root[keyPath: path] = value },
            write: { $0[keyPath: path] })
    }

    /// The string types Apple uses for attribute values.
    enum StringTag: Sendable {
        case utf8
        case ia5

        var asn1: ASN1Identifier { self == .utf8 ? .utf8String : .ia5String }
    }

    private static func exact<Value: FixedWidthInteger>(_ value: Int64, type: Int) throws(ReceiptPayloadError) -> Value
    {
        guard let exact = Value(exactly: value) else {
            throw ReceiptPayloadError("attribute \(type) holds \(value), which is out of range")
        }
        return exact
    }
}
