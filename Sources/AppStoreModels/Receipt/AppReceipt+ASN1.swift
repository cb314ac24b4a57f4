public import Foundation
import SwiftASN1

extension AppReceipt: ReceiptAttributeRecord {
    /// Reads a payload from strict DER.
    ///
    /// - Throws: ``ReceiptPayloadError`` when the bytes are not DER, not a `SET OF ReceiptAttribute`,
    ///   a value has the wrong kind, or an attribute every receipt carries is missing.
    public init(payloadDER bytes: some Collection<UInt8>) throws(ReceiptPayloadError) {
        let node: ASN1Node
        do { node = try DER.parse(Array(bytes)) } catch {
            throw ReceiptPayloadError("the payload is not DER: \(error)")
        }
        try self.init(attributes: ReceiptAttribute.attributes(inSet: node))
    }

    /// Reads a payload from BER (indefinite lengths and segmented strings allowed) or DER.
    ///
    /// - Throws: ``ReceiptPayloadError``, as ``init(payloadDER:)``.
    public init(payloadBER bytes: some Collection<UInt8>) throws(ReceiptPayloadError) {
        try self.init(attributes: ReceiptAttribute.attributes(inSet: bytes))
    }

    /// Reads a payload from its attributes, in any order. The `version` of each is ignored.
    public init(attributes: [ReceiptAttribute]) throws(ReceiptPayloadError) {
        var receipt = AppReceipt(bundleID: "", applicationVersion: "")
        try Self.read(attributes, into: &receipt, what: "the app receipt payload") {
            attribute, receipt throws(ReceiptPayloadError) in
            guard attribute.type == InAppPurchaseReceipt.attributeType else { return false }
            do throws(ReceiptPayloadError) {
                receipt.inAppPurchases.append(try InAppPurchaseReceipt(payloadBER: attribute.value))
            } catch {
                throw ReceiptPayloadError("in-app purchase \(receipt.inAppPurchases.count + 1): \(error.reason)")
            }
            return true
        }
        self = receipt
    }

    /// The payload as a DER `SET OF ReceiptAttribute`, with Apple's encodings: strings as
    /// UTF8String (the age rating as IA5String), dates as RFC 3339 IA5String, numbers as INTEGER,
    /// the opaque value and hash as raw bytes.
    ///
    /// Attributes are ordered by type, as Xcode writes them, rather than by their encoded bytes,
    /// so that in-app purchases keep their order; readers accept any order. Parsing the result
    /// gives back an equal value.
    public func serializedPayload() -> [UInt8] {
        ReceiptAttribute.serializeSet(attributes)
    }

    /// Every attribute the payload serializes to, ordered by type.
    public var attributes: [ReceiptAttribute] {
        let purchases = inAppPurchases.map {
            ReceiptAttribute(type: InAppPurchaseReceipt.attributeType, version: 1, value: Data($0.serializedPayload()))
        }
        return allAttributes(adding: purchases)
    }

    /// The exact value bytes of attribute 2 (the DER UTF8String, tag and length included) that
    /// enter the SHA-1 device hash.
    ///
    /// For a parsed payload these are the bytes Apple wrote; for one built in code, the encoding
    /// ``serializedPayload()`` writes.
    public var bundleIDBytes: Data {
        Self.fields.first { $0.type == 2 }.flatMap { attribute(for: $0)?.value }
            ?? ReceiptValueCoding.encodeString(bundleID)
    }

    static var fields: [ReceiptField<Self>] {
        [
            ReceiptFields.optionalString(0, \.receiptTypeText),
            ReceiptFields.integer(1, \.appItemID),
            ReceiptFields.string(2, \.bundleID),
            ReceiptFields.string(3, \.applicationVersion),
            ReceiptFields.bytes(4, \.opaqueValue),
            ReceiptFields.bytes(5, \.sha1Hash),
            ReceiptFields.optionalString(10, \.ageRating, identifier: .ia5),
            ReceiptFields.date(12, \.creationDate),
            ReceiptFields.integer(15, \.downloadID),
            ReceiptFields.integer(16, \.versionExternalIdentifier),
            ReceiptFields.date(18, \.originalPurchaseDate),
            ReceiptFields.optionalString(19, \.originalApplicationVersion),
            ReceiptFields.date(21, \.expirationDate),
        ]
    }

    /// The receipt type as text, for the attribute table.
    private var receiptTypeText: String? {
        get { receiptType?.rawValue }
        set { receiptType = newValue.map(AppReceiptType.init(rawValue:)) }
    }
}
