import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Foundation
import Testing

/// Input that is not a receipt must fail with `malformedInput`, never crash.
@Suite struct MalformedReceiptTests {
    static let malformed = AppStoreSecurityError(.malformedInput)

    /// A small signed receipt: one purchase, leaf-only chain.
    static func smallReceipt() throws -> [UInt8] {
        let authority = try ReceiptSamples.authority()
        let identity = SigningIdentity(privateKey: authority.leafKey, chain: [authority.leaf])
        let receipt = AppReceipt(
            receiptType: .productionSandbox, bundleID: "a.b", applicationVersion: "1",
            opaqueValue: Data([1, 2, 3, 4]), sha1Hash: Data(repeating: 9, count: 20),
            creationDate: ReceiptSamples.creationDate,
            inAppPurchases: [
                InAppPurchaseReceipt(productID: "p", transactionID: "1", purchaseDate: ReceiptSamples.creationDate)
            ])
        return try AppReceiptSigner(identity: identity).sign(receipt)
    }

    @Test func emptyInput() {
        #expect(throws: Self.malformed) { try SignedAppReceipt(bytes: [UInt8]()) }
        #expect(throws: Self.malformed) { try SignedAppReceipt(base64Encoded: "") }
        #expect(throws: Self.malformed) { try SignedAppReceipt(base64Encoded: " \n\t") }
        #expect(throws: Self.malformed) { try ReceiptTransactionIDExtractor.transactionID(inAppReceipt: "") }
        #expect(throws: Self.malformed) { try ReceiptTransactionIDExtractor.transactionID(inTransactionReceipt: "") }
    }

    @Test(arguments: ["not base64!", "%%%%", "MIIB=x==", "🙂"])
    func notBase64(text: String) {
        #expect(throws: Self.malformed) { try SignedAppReceipt(base64Encoded: text) }
        #expect(throws: Self.malformed) { try ReceiptTransactionIDExtractor.transactionID(inAppReceipt: text) }
        #expect(throws: Self.malformed) { try ReceiptTransactionIDExtractor.transactionID(inTransactionReceipt: text) }
    }

    @Test(arguments: [1, 2, 3, 16, 100, 1_000, 4_096])
    func randomBytes(count: Int) {
        var generator = ReceiptSamples.SeededGenerator(state: UInt64(count))
        for _ in 0..<20 {
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(throws: Self.malformed) { try SignedAppReceipt(bytes: bytes) }
            // The same with a plausible start: an indefinite-length SEQUENCE holding the signedData OID.
            bytes = [0x30, 0x80, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02] + bytes
            #expect(throws: Self.malformed) { try SignedAppReceipt(bytes: bytes) }
        }
    }

    @Test func everyPrefixOfASmallReceiptIsMalformed() throws {
        let bytes = try Self.smallReceipt()
        #expect(try SignedAppReceipt(bytes: bytes).receipt.bundleID == "a.b")
        for length in 0..<bytes.count {
            #expect(throws: Self.malformed, "prefix of \(length) of \(bytes.count) bytes") {
                try SignedAppReceipt(bytes: bytes.prefix(length))
            }
            #expect(throws: Self.malformed, "prefix of \(length) of \(bytes.count) bytes") {
                try ReceiptTransactionIDExtractor.transactionID(inAppReceiptBytes: bytes.prefix(length))
            }
        }
    }

    @Test func trailingBytesAreMalformed() throws {
        let bytes = try Self.smallReceipt()
        #expect(throws: Self.malformed) { try SignedAppReceipt(bytes: bytes + [0]) }
        #expect(throws: Self.malformed) { try SignedAppReceipt(bytes: bytes + bytes) }
    }

    /// Every single-byte change either parses or fails with an AppStoreSecurityError; verifying
    /// what parses fails or succeeds the same way. Nothing traps.
    @Test func everyByteFlipFailsCleanly() async throws {
        let bytes = try Self.smallReceipt()
        for index in bytes.indices {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var changed = bytes
                changed[index] ^= mask
                do {
                    let parsed = try SignedAppReceipt(bytes: changed)
                    _ = try? await parsed.verify(trustsXcodeSigning: true)
                } catch {
                    #expect(error.code != .badSignature)
                }
            }
        }
    }

    @Test func wrongShapesAreMalformed() async throws {
        // A SEQUENCE holding the pkcs7-data OID instead of signedData.
        let wrongType: [UInt8] = [0x30, 0x0B, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]
        #expect(throws: Self.malformed) { try SignedAppReceipt(bytes: wrongType) }
        // A receipt whose content is not a receipt payload.
        let authority = try ReceiptSamples.authority()
        var signedData = try AppReceiptSigner(identity: authority.signingIdentity)
            .signedData(for: ReceiptSamples.fullReceipt())
        for content: [UInt8]? in [
            nil, [], [0x31, 0x00], [0x04, 0x02, 0x31, 0x00], [0x05, 0x00], Array("hello".utf8),
        ] {
            signedData.content = content
            #expect(throws: Self.malformed, "content \(String(describing: content))") {
                try SignedAppReceipt(bytes: signedData.serializedDER())
            }
        }
        signedData.content = ReceiptSamples.fullReceipt().serializedPayload()
        var twoSigners = signedData
        twoSigners.signerInfos += twoSigners.signerInfos
        #expect(throws: Self.malformed) { try SignedAppReceipt(bytes: twoSigners.serializedDER()) }
        var noCertificates = signedData
        noCertificates.certificates = []
        await #expect(throws: Self.malformed) { try await SignedAppReceipt(bytes: noCertificates.serializedDER()).verify() }
    }

    @Test func legacyTransactionReceiptWithoutIDGivesNil() throws {
        let plist =
            #"{ "signature" = "AAAA"; "purchase-info" = "\#(Data(#"{ "product-id" = "x"; }"#.utf8).base64EncodedString())"; }"#
        #expect(
            try ReceiptTransactionIDExtractor.transactionID(
                inTransactionReceipt: Data(plist.utf8).base64EncodedString()) == nil)
        let noPurchaseInfo = Data(#"{ "signature" = "AAAA"; }"#.utf8).base64EncodedString()
        #expect(try ReceiptTransactionIDExtractor.transactionID(inTransactionReceipt: noPurchaseInfo) == nil)
        let brokenInner = Data(#"{ "purchase-info" = "***"; }"#.utf8).base64EncodedString()
        #expect(throws: Self.malformed) {
            try ReceiptTransactionIDExtractor.transactionID(inTransactionReceipt: brokenInner)
        }
    }
}
