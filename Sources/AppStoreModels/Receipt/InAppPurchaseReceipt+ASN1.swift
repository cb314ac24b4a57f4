import Foundation

extension InAppPurchaseReceipt: ReceiptAttributeRecord {
    /// The attribute type of an in-app purchase record inside an app receipt payload.
    public static let attributeType = 17

    /// Reads a record from the DER of its `SET OF ReceiptAttribute` (the value of a type-17 attribute).
    ///
    /// - Throws: ``ReceiptPayloadError`` when the bytes are not such a set, a value has the wrong
    ///   kind, or one of quantity, product ID, transaction ID and purchase date is missing.
    public init(payloadBER bytes: some Collection<UInt8>) throws(ReceiptPayloadError) {
        try self.init(attributes: ReceiptAttribute.attributes(inSet: bytes))
    }

    /// Reads a record from its attributes, in any order.
    public init(attributes: [ReceiptAttribute]) throws(ReceiptPayloadError) {
        var record = InAppPurchaseReceipt(
            productID: "", transactionID: "", purchaseDate: Date(timeIntervalSince1970: 0))
        try Self.read(attributes, into: &record, what: "an in-app purchase record")
        self = record
    }

    /// The record as a DER `SET OF ReceiptAttribute`, ordered by type, with Apple's encodings:
    /// strings as UTF8String, dates as RFC 3339 IA5String, numbers and flags as INTEGER.
    public func serializedPayload() -> [UInt8] {
        ReceiptAttribute.serializeSet(attributes)
    }

    /// Every attribute the record serializes to, ordered by type.
    public var attributes: [ReceiptAttribute] {
        allAttributes()
    }

    static var fields: [ReceiptField<Self>] {
        [
            ReceiptFields.requiredInteger(1701, \.quantity),
            ReceiptFields.string(1702, \.productID),
            ReceiptFields.string(1703, \.transactionID),
            ReceiptFields.requiredDate(1704, \.purchaseDate),
            ReceiptFields.optionalString(1705, \.originalTransactionID),
            ReceiptFields.date(1706, \.originalPurchaseDate),
            ReceiptFields.integer(1707, \.productType),
            ReceiptFields.date(1708, \.expiresDate),
            ReceiptFields.integer(1711, \.webOrderLineItemID),
            ReceiptFields.date(1712, \.cancellationDate),
            ReceiptFields.flag(1713, \.isTrialPeriod),
            ReceiptFields.flag(1719, \.isInIntroOfferPeriod),
            ReceiptFields.optionalString(1721, \.promotionalOfferIdentifier),
        ]
    }
}
