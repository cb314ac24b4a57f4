import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

/// Receipts Kakin signs with its own certificate authority: build, parse, verify, tamper.
@Suite struct SignedAppReceiptTests {
    let authority: SandboxCertificateAuthority
    let receipt: AppReceipt
    let signer: AppReceiptSigner

    init() throws {
        authority = try ReceiptSamples.authority()
        receipt = ReceiptSamples.fullReceipt()
        signer = AppReceiptSigner(identity: authority.signingIdentity)
    }

    @Test func parsesBackToTheSameReceipt() throws {
        let der = try signer.sign(receipt)
        let parsed = try SignedAppReceipt(bytes: der)
        #expect(parsed.receipt == receipt)
        #expect(parsed.receipt.inAppPurchases.map(\.transactionID) == receipt.inAppPurchases.map(\.transactionID))
        #expect(parsed.certificates == [authority.leaf, authority.intermediate, authority.root])
        #expect(parsed.signerCertificate == authority.leaf)
        #expect(parsed.digestAlgorithm == .sha256)
        #expect(parsed.signatureAlgorithm == .ecdsaWithSHA256)
        #expect(parsed.signerInfo.signedAttributes == nil)
        #expect(parsed.signedContent == receipt.serializedPayload())
        #expect(try parsed.signedData.serializedDER() == der)
    }

    @Test func base64WithLineBreaksParses() throws {
        let text = try signer.signBase64(receipt)
        var wrapped = ""
        for (index, character) in text.enumerated() {
            if index > 0, index % 76 == 0 { wrapped += "\r\n" }
            wrapped.append(character)
        }
        #expect(try SignedAppReceipt(base64Encoded: " \(wrapped)\n").receipt == receipt)
    }

    @Test func verifiesAgainstTheAuthorityRootAtCreation() async throws {
        let parsed = try SignedAppReceipt(bytes: signer.sign(receipt))
        let result = try await parsed.verify(
            roots: [authority.root], bundleID: receipt.bundleID, environment: .sandbox)
        #expect(result.signatureVerified)
        #expect(result.chainVerified)
        #expect(result.root == authority.root)
        #expect(result.signerCertificate == authority.leaf)
        #expect(result.validationTime == ReceiptSamples.creationDate)
        #expect(!result.deviceHashVerified)
        #expect(result.receipt == receipt)
    }

    @Test func foreignAndAppleRootsAreNotTrusted() async throws {
        let parsed = try SignedAppReceipt(bytes: signer.sign(receipt))
        let foreign = try ReceiptSamples.authority()
        let differentName = try ReceiptSamples.authority(name: "Someone Else")
        for roots in [
            [foreign.root], [differentName.root], AppleRootCertificates.receiptRoots,
            AppleRootCertificates.jwsRoots,
        ] {
            await #expect(throws: AppStoreSecurityError(.untrustedChain)) { try await parsed.verify(roots: roots) }
        }
        await #expect(throws: AppStoreSecurityError(.untrustedChain)) { try await parsed.verify() }
    }

    @Test func expiredLeafIsReported() async throws {
        let parsed = try SignedAppReceipt(bytes: signer.sign(receipt))
        let longAfter = authority.leaf.notValidAfter.addingTimeInterval(86_400)
        await #expect(throws: AppStoreSecurityError(.certificateExpired)) {
            try await parsed.verify(roots: [authority.root], at: longAfter)
        }
        let before = authority.leaf.notValidBefore.addingTimeInterval(-86_400)
        await #expect(throws: AppStoreSecurityError(.certificateNotYetValid)) {
            try await parsed.verify(roots: [authority.root], at: before)
        }
    }

    @Test func flippedContentByteBreaksTheSignature() async throws {
        let original = try signer.signedData(for: receipt)
        let content = try #require(original.content)
        for index in [0, content.count / 2, content.count - 1] {
            var tampered = original
            var bytes = content
            bytes[index] ^= 0x01
            tampered.content = bytes
            let parsed = try? SignedAppReceipt(bytes: tampered.serializedDER())
            // Some flips break the payload's ASN.1; those that still parse must fail the signature.
            if let parsed {
                await #expect(throws: AppStoreSecurityError(.badSignature)) { try await parsed.verify(roots: [authority.root]) }
            }
        }
        var changed = receipt
        changed.bundleID = "com.example.kakin.other"
        var tampered = original
        tampered.content = changed.serializedPayload()
        let parsed = try SignedAppReceipt(bytes: tampered.serializedDER())
        #expect(parsed.receipt.bundleID == "com.example.kakin.other")
        await #expect(throws: AppStoreSecurityError(.badSignature)) { try await parsed.verify(roots: [authority.root]) }
    }

    @Test func deviceHashMatchesOnlyTheRightDevice() async throws {
        let device = AppReceipt.deviceIdentifier(from: ReceiptSamples.deviceUUID)
        #expect(device.count == 16)
        #expect(device.first == 0x0F && device.last == 0xF0)
        let parsed = try SignedAppReceipt(bytes: signer.sign(receipt, deviceIdentifier: device))
        let expected = Data(
            Insecure.SHA1.hash(data: device + receipt.opaqueValue + ReceiptValueBytes.utf8String(receipt.bundleID)))
        #expect(parsed.receipt.sha1Hash == expected)
        try parsed.receipt.verifyDeviceHash(for: device)
        let result = try await parsed.verify(roots: [authority.root], deviceIdentifier: device)
        #expect(result.deviceHashVerified)

        let other = AppReceipt.deviceIdentifier(from: UUID())
        #expect(throws: AppStoreSecurityError(.deviceHashMismatch)) { try parsed.receipt.verifyDeviceHash(for: other) }
        await #expect(throws: AppStoreSecurityError(.deviceHashMismatch)) {
            try await parsed.verify(roots: [authority.root], deviceIdentifier: other)
        }
    }

    @Test func appChecksAreApplied() async throws {
        let parsed = try SignedAppReceipt(bytes: signer.sign(receipt))
        await #expect(throws: AppStoreSecurityError(.wrongBundleID)) {
            try await parsed.verify(roots: [authority.root], bundleID: "com.example.other")
        }
        await #expect(throws: AppStoreSecurityError(.wrongEnvironment)) {
            try await parsed.verify(roots: [authority.root], environment: .production)
        }
    }

    @Test func chainsOfOtherLengthsAreRejected() async throws {
        let leafOnly = AppReceiptSigner(
            identity: SigningIdentity(privateKey: authority.leafKey, chain: [authority.leaf]))
        let parsed = try SignedAppReceipt(bytes: leafOnly.sign(receipt))
        await #expect(throws: AppStoreSecurityError(.invalidChainLength)) { try await parsed.verify(roots: [authority.root]) }
        // Trusting Xcode accepts only a self-signed certificate.
        await #expect(throws: AppStoreSecurityError(.untrustedChain)) {
            try await parsed.verify(roots: [authority.root], trustsXcodeSigning: true)
        }
        let twoCertificates = AppReceiptSigner(
            identity: SigningIdentity(privateKey: authority.leafKey, chain: [authority.leaf, authority.intermediate]))
        await #expect(throws: AppStoreSecurityError(.invalidChainLength)) {
            try await SignedAppReceipt(bytes: twoCertificates.sign(receipt)).verify(roots: [authority.root])
        }
    }

    @Test func signerWithoutMatchingKeyIsAConfigurationError() throws {
        let mismatched = AppReceiptSigner(
            identity: SigningIdentity(privateKey: P256.Signing.PrivateKey(), chain: authority.signingIdentity.chain))
        #expect(throws: AppStoreSecurityError(.invalidConfiguration)) { try mismatched.sign(receipt) }
        let empty = AppReceiptSigner(identity: SigningIdentity(privateKey: authority.leafKey, chain: []))
        #expect(throws: AppStoreSecurityError(.invalidConfiguration)) { try empty.sign(receipt) }
    }

    @Test func transactionIDOfTheFirstPurchaseIsExtracted() throws {
        let text = try signer.signBase64(receipt)
        #expect(try ReceiptTransactionIDExtractor.transactionID(inAppReceipt: text) == "2000000000000001")
        var noPurchases = receipt
        noPurchases.inAppPurchases = []
        #expect(try ReceiptTransactionIDExtractor.transactionID(inAppReceipt: signer.signBase64(noPurchases)) == nil)
    }
}

/// DER encodings written out by hand, to check the library against an independent source.
enum ReceiptValueBytes {
    /// The DER of a short UTF8String: tag 0x0C, one length byte, the text.
    static func utf8String(_ text: String) -> Data {
        let bytes = Array(text.utf8)
        return Data([0x0C, UInt8(bytes.count)] + bytes)
    }
}
