public import AppStoreModels
import Foundation
import SwiftASN1
public import X509

/// An app receipt as it arrives: a PKCS#7 SignedData around the `AppReceipt` payload, parsed
/// but not yet trusted.
///
/// Parsing accepts the BER Apple and Xcode write and the DER Kakin writes, as bytes or base64
/// text. Nothing here is trusted until ``verify(roots:at:trustsXcodeSigning:bundleID:environment:deviceIdentifier:revocation:now:)``
/// has checked the signature and the certificates. Every failure to parse is an
/// ``AppStoreSecurityError`` with code `malformedInput` and a reason saying what was wrong.
public struct SignedAppReceipt: Sendable {
    /// The decoded payload.
    public let receipt: AppReceipt
    /// The parsed container: algorithms, certificates, signer, signed content.
    public let signedData: CMSSignedData
    /// The one signer of the receipt.
    public let signerInfo: CMSSignerInfo
    /// The bytes the signature covers (directly, or through the message digest attribute).
    public let signedContent: [UInt8]
    /// The payload's DER: ``signedContent`` itself, or what it wraps when a producer put the
    /// payload in one more OCTET STRING (Apple's libraries unwrap that once, and so does this).
    public let payload: [UInt8]

    /// Parses a receipt from its DER or BER bytes.
    public init(bytes: some Collection<UInt8>) throws(AppStoreSecurityError) {
        let array = Array(bytes)
        guard !array.isEmpty else {
            throw AppStoreSecurityError(.malformedInput, "the receipt is empty")
        }
        let signedData: CMSSignedData
        do { signedData = try CMSSignedData(berEncoded: array) } catch {
            throw AppStoreSecurityError(
                .malformedInput, "the receipt is not a PKCS#7 SignedData: \(error)", expected: "BER SignedData")
        }
        try self.init(signedData: signedData)
    }

    /// Parses a receipt from base64 text, as `appStoreReceiptURL` data is usually sent; line
    /// breaks and other whitespace are ignored.
    public init(base64Encoded text: String) throws(AppStoreSecurityError) {
        try self.init(bytes: Self.decodeBase64(text))
    }

    /// Reads the payload of an already parsed container.
    public init(signedData: CMSSignedData) throws(AppStoreSecurityError) {
        guard signedData.contentType == CMSSignedData.dataOID else {
            throw AppStoreSecurityError(
                .malformedInput, "the signed content is not pkcs7-data", expected: "\(CMSSignedData.dataOID)",
                found: "\(signedData.contentType)")
        }
        guard let content = signedData.content else {
            throw AppStoreSecurityError(.malformedInput, "the SignedData carries no content: the payload is missing")
        }
        guard signedData.signerInfos.count == 1, let signerInfo = signedData.signerInfos.first else {
            throw AppStoreSecurityError(
                .malformedInput, "an app receipt has exactly one signer", expected: "1 SignerInfo",
                found: "\(signedData.signerInfos.count)")
        }
        let payload = try Self.unwrapPayload(content)
        do {
            receipt = try AppReceipt(payloadBER: payload)
        } catch {
            throw AppStoreSecurityError(.malformedInput, "the receipt payload is not valid: \(error.reason)")
        }
        self.signedData = signedData
        self.signerInfo = signerInfo
        signedContent = content
        self.payload = payload
    }

    /// The embedded certificates, in the order found.
    public var certificates: [Certificate] { signedData.certificates }

    /// The embedded certificate the signer names, if any.
    public var signerCertificate: Certificate? {
        certificates.first { signerInfo.signerIdentifier.matches($0) }
    }

    /// The signer's digest algorithm: SHA-1 or SHA-256 for App Store receipts.
    public var digestAlgorithm: CMSAlgorithmIdentifier { signerInfo.digestAlgorithm }

    /// The signer's signature algorithm, as written (bare `rsaEncryption` on real receipts).
    public var signatureAlgorithm: CMSAlgorithmIdentifier { signerInfo.signatureAlgorithm }

    /// Decodes base64 text, ignoring whitespace.
    static func decodeBase64(_ text: String) throws(AppStoreSecurityError) -> Data {
        let compact = text.filter { !$0.isWhitespace }
        guard !compact.isEmpty else {
            throw AppStoreSecurityError(.malformedInput, "the receipt text is empty")
        }
        guard let data = Data(base64Encoded: compact) else {
            throw AppStoreSecurityError(
                .malformedInput, "the receipt text is not base64", expected: "base64 of a PKCS#7 SignedData")
        }
        return data
    }

    /// Returns the payload inside `content`, unwrapping one extra OCTET STRING layer if present.
    static func unwrapPayload(_ content: [UInt8]) throws(AppStoreSecurityError) -> [UInt8] {
        // 0x04 is a primitive OCTET STRING, 0x24 a constructed one; a payload starts with SET (0x31).
        guard content.first == 0x04 || content.first == 0x24 else { return content }
        do {
            return Array(try ASN1OctetString(berEncoded: BER.parse(content)).bytes)
        } catch {
            throw AppStoreSecurityError(.malformedInput, "the receipt content is a broken OCTET STRING: \(error)")
        }
    }
}
