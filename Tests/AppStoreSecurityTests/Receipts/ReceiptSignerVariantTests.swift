import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Crypto
import Foundation
import SwiftASN1
import Testing

/// Signer variants other producers use: signed attributes (the signature covers the attributes,
/// and the `messageDigest` attribute binds them to the content), a signer named by subject key
/// identifier, and a payload wrapped in one more OCTET STRING.
@Suite struct ReceiptSignerVariantTests {
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

    @Test func signatureOverAttributesVerifies() async throws {
        let parsed = try SignedAppReceipt(bytes: signedData().serializedDER())
        #expect(parsed.signerInfo.signedAttributes?.count == 2)
        #expect(parsed.signerInfo.messageDigest == Array(SHA256.hash(data: receipt.serializedPayload())))
        let result = try await parsed.verify(roots: [authority.root])
        #expect(result.receipt == receipt)
    }

    @Test func wrongMessageDigestIsABadSignature() async throws {
        let parsed = try SignedAppReceipt(
            bytes: signedData(messageDigest: Array(repeating: 0, count: 32)).serializedDER())
        await #expect(throws: AppStoreSecurityError(.badSignature)) { try await parsed.verify(roots: [authority.root]) }
    }

    @Test func unsupportedDigestIsAWrongAlgorithm() async throws {
        var signedData = try AppReceiptSigner(identity: authority.signingIdentity).signedData(for: receipt)
        signedData.signerInfos[0].digestAlgorithm = CMSAlgorithmIdentifier(algorithm: [1, 2, 840, 113_549, 2, 5])
        let parsed = try SignedAppReceipt(bytes: signedData.serializedDER())
        await #expect(throws: AppStoreSecurityError(.wrongAlgorithm)) { try await parsed.verify(roots: [authority.root]) }
    }

    @Test func rsaSignatureAlgorithmWithAnECKeyIsAWrongAlgorithm() async throws {
        var signedData = try AppReceiptSigner(identity: authority.signingIdentity).signedData(for: receipt)
        signedData.signerInfos[0].signatureAlgorithm = .sha256WithRSAEncryption
        let parsed = try SignedAppReceipt(bytes: signedData.serializedDER())
        await #expect(throws: AppStoreSecurityError(.wrongAlgorithm)) { try await parsed.verify(roots: [authority.root]) }
    }

    @Test func signerNamedBySubjectKeyIdentifierVerifies() async throws {
        var signedData = try AppReceiptSigner(identity: authority.signingIdentity).signedData(for: receipt)
        let keyIdentifier = try #require(try authority.leaf.extensions.subjectKeyIdentifier?.keyIdentifier)
        signedData.signerInfos[0].version = 3
        signedData.signerInfos[0].signerIdentifier = .subjectKeyIdentifier(Array(keyIdentifier))
        let parsed = try SignedAppReceipt(bytes: signedData.serializedDER())
        #expect(parsed.signerCertificate == authority.leaf)
        await #expect(try parsed.verify(roots: [authority.root]).receipt == receipt)

        signedData.signerInfos[0].signerIdentifier = .subjectKeyIdentifier([1, 2, 3])
        let unknownSigner = try SignedAppReceipt(bytes: signedData.serializedDER())
        #expect(unknownSigner.signerCertificate == nil)
        await #expect(throws: AppStoreSecurityError(.malformedInput)) { try await unknownSigner.verify(roots: [authority.root]) }
    }

    @Test func payloadInAnExtraOctetStringIsUnwrapped() async throws {
        var signedData = try AppReceiptSigner(identity: authority.signingIdentity).signedData(for: receipt)
        var serializer = DER.Serializer()
        try serializer.serialize(ASN1OctetString(contentBytes: receipt.serializedPayload()[...]))
        let wrapped = serializer.serializedBytes
        signedData.content = wrapped
        signedData.signerInfos[0].signature = Array(
            try authority.leafKey.signature(for: SHA256.hash(data: wrapped)).derRepresentation)
        let parsed = try SignedAppReceipt(bytes: signedData.serializedDER())
        #expect(parsed.signedContent == wrapped)
        #expect(parsed.payload == receipt.serializedPayload())
        #expect(parsed.receipt == receipt)
        _ = try await parsed.verify(roots: [authority.root])
        let text = Data(try signedData.serializedDER()).base64EncodedString()
        #expect(try ReceiptTransactionIDExtractor.transactionID(inAppReceipt: text) == "2000000000000001")
    }
}
