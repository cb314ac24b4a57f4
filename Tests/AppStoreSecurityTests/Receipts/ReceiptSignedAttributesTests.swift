import AppStoreModels
import AppStoreSecurity
import Crypto
import Foundation
import SwiftASN1
import Testing

/// Signers that use signed attributes: the signature covers the attributes, and the
/// `messageDigest` attribute binds them to the content.
@Suite struct ReceiptSignedAttributesTests {
    let authority: SandboxCertificateAuthority
    let receipt = ReceiptSamples.fullReceipt()

    init() throws {
        authority = try ReceiptSamples.authority()
    }

    /// A SignedData like the signer's, but signed over attributes holding `digest`.
    func signedData(messageDigest digest: [UInt8]? = nil) throws -> CMSSignedData {
        var signedData = try AppReceiptSigner(identity: authority.signingIdentity).signedData(for: receipt)
        let content = try #require(signedData.content)
        let attributes = [
            CMSAttribute(type: CMSAttribute.contentTypeOID, values: [try ASN1Any(erasing: CMSSignedData.dataOID)]),
            CMSAttribute(
                type: CMSAttribute.messageDigestOID,
                values: [
                    try ASN1Any(
                        erasing: ASN1OctetString(contentBytes: (digest ?? Array(SHA256.hash(data: content)))[...]))
                ]),
        ]
        var signer = signedData.signerInfos[0]
        signer.signedAttributes = attributes
        let signedBytes = try #require(signer.signedAttributesDER)
        #expect(signedBytes.first == 0x31)
        signer.signature = Array(try authority.leafKey.signature(for: SHA256.hash(data: signedBytes)).derRepresentation)
        signedData.signerInfos = [signer]
        return signedData
    }

    @Test func signatureOverAttributesVerifies() throws {
        let parsed = try SignedAppReceipt(bytes: signedData().serializedDER())
        #expect(parsed.signerInfo.signedAttributes?.count == 2)
        #expect(parsed.signerInfo.messageDigest == Array(SHA256.hash(data: receipt.serializedPayload())))
        let result = try parsed.verify(roots: [authority.root])
        #expect(result.receipt == receipt)
    }

    @Test func wrongMessageDigestIsABadSignature() throws {
        let parsed = try SignedAppReceipt(
            bytes: signedData(messageDigest: Array(repeating: 0, count: 32)).serializedDER())
        #expect(throws: AppStoreSecurityError(.badSignature)) { try parsed.verify(roots: [authority.root]) }
    }

    @Test func unsupportedDigestIsAWrongAlgorithm() throws {
        var signedData = try AppReceiptSigner(identity: authority.signingIdentity).signedData(for: receipt)
        signedData.signerInfos[0].digestAlgorithm = CMSAlgorithmIdentifier(algorithm: [1, 2, 840, 113_549, 2, 5])
        let parsed = try SignedAppReceipt(bytes: signedData.serializedDER())
        #expect(throws: AppStoreSecurityError(.wrongAlgorithm)) { try parsed.verify(roots: [authority.root]) }
    }

    @Test func rsaSignatureAlgorithmWithAnECKeyIsAWrongAlgorithm() throws {
        var signedData = try AppReceiptSigner(identity: authority.signingIdentity).signedData(for: receipt)
        signedData.signerInfos[0].signatureAlgorithm = .sha256WithRSAEncryption
        let parsed = try SignedAppReceipt(bytes: signedData.serializedDER())
        #expect(throws: AppStoreSecurityError(.wrongAlgorithm)) { try parsed.verify(roots: [authority.root]) }
    }
}
