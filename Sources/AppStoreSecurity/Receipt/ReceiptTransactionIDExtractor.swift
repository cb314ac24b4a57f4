import AppStoreModels
import Foundation

/// Finds a transaction ID in an old receipt without verifying it, as Apple's `ReceiptUtility`
/// does, so that a server moving off `verifyReceipt` can ask the App Store Server API about it.
///
/// Nothing returned here is trusted: anyone can write these receipts. Use the ID only to look the
/// transaction up with Apple.
public enum ReceiptTransactionIDExtractor {
    /// The ID of the first in-app purchase of an app receipt: in the first type-17 attribute, the
    /// first attribute that is a transaction ID (1703) or an original transaction ID (1705).
    ///
    /// - Parameter base64: the receipt as base64 text (whitespace ignored).
    /// - Returns: the ID, or `nil` when the receipt has no in-app purchase or the purchase has neither ID.
    /// - Throws: ``AppStoreSecurityError/Code/malformedInput`` when the text is not an app receipt.
    public static func transactionID(inAppReceipt base64: String) throws(AppStoreSecurityError) -> String? {
        try transactionID(inAppReceiptBytes: SignedAppReceipt.decodeBase64(base64))
    }

    /// The same as ``transactionID(inAppReceipt:)``, for the receipt's DER or BER bytes.
    public static func transactionID(
        inAppReceiptBytes bytes: some Collection<UInt8>
    ) throws(AppStoreSecurityError)
        -> String?
    {
        let signedData: CMSSignedData
        do { signedData = try CMSSignedData(berEncoded: Array(bytes)) } catch {
            throw AppStoreSecurityError(.malformedInput, "the receipt is not a PKCS#7 SignedData: \(error)")
        }
        guard let content = signedData.content else {
            throw AppStoreSecurityError(.malformedInput, "the SignedData carries no content")
        }
        let payload = try SignedAppReceipt.unwrapPayload(content)
        do throws(ReceiptPayloadError) {
            let attributes = try ReceiptAttribute.attributes(inSet: payload)
            guard let purchase = attributes.first(where: { $0.type == InAppPurchaseReceipt.attributeType }) else {
                return nil
            }
            let fields = try ReceiptAttribute.attributes(inSet: purchase.value)
            guard let identifier = fields.first(where: { $0.type == 1703 || $0.type == 1705 }) else { return nil }
            guard let text = identifier.stringValue else {
                throw ReceiptPayloadError("attribute \(identifier.type) does not hold a string")
            }
            return text
        } catch {
            throw AppStoreSecurityError(.malformedInput, "the receipt payload is not valid: \(error.reason)")
        }
    }

    /// The `transaction-id` of an iOS 6 style transaction receipt (`SKPaymentTransaction.transactionReceipt`).
    ///
    /// Such a receipt is base64 of an old-style property list holding `"purchase-info" = "<base64>";`,
    /// whose decoded text holds `"transaction-id" = "…";`.
    ///
    /// - Returns: the ID, or `nil` when either entry is missing.
    /// - Throws: ``AppStoreSecurityError/Code/malformedInput`` when the text or the purchase info is not base64 text.
    public static func transactionID(inTransactionReceipt base64: String) throws(AppStoreSecurityError) -> String? {
        let outer = try text(fromBase64: base64, what: "the transaction receipt")
        guard let purchaseInfo = quotedValue(for: "purchase-info", in: outer) else { return nil }
        let inner = try text(fromBase64: purchaseInfo, what: "the purchase-info entry")
        return quotedValue(for: "transaction-id", in: inner)
    }

    private static func text(fromBase64 base64: String, what: String) throws(AppStoreSecurityError) -> String {
        let compact = base64.filter { !$0.isWhitespace }
        guard !compact.isEmpty, let data = Data(base64Encoded: compact) else {
            throw AppStoreSecurityError(.malformedInput, "\(what) is not base64")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw AppStoreSecurityError(.malformedInput, "\(what) is not UTF-8 text")
        }
        return text
    }

    /// The value of `"key" = "value";` in an old-style property list, whitespace around `=` allowed.
    static func quotedValue(for key: String, in text: String) -> String? {
        var rest = Substring(text)
        let quotedKey = "\"\(key)\""
        while let keyRange = rest.range(of: quotedKey) {
            rest = rest[keyRange.upperBound...]
            var cursor = rest.drop(while: \.isWhitespace)
            guard cursor.first == "=" else { continue }
            cursor = cursor.dropFirst().drop(while: \.isWhitespace)
            guard cursor.first == "\"" else { continue }
            cursor = cursor.dropFirst()
            guard let end = cursor.firstIndex(of: "\"") else { return nil }
            let value = cursor[..<end]
            guard cursor[end...].dropFirst().drop(while: \.isWhitespace).first == ";" else { continue }
            return String(value)
        }
        return nil
    }
}
