import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinTestSupport
import Testing

/// Apple's own Xcode receipts: BER with indefinite lengths, a segmented OCTET STRING, RSA-SHA256
/// and one self-signed "StoreKit" certificate.
@Suite(.enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
struct XcodeReceiptFixtureTests {
    static let bundleID = "com.example.naturelab.backyardbirds.example"

    static func receipt(_ name: String) throws -> SignedAppReceipt {
        try SignedAppReceipt(base64Encoded: SharedFixtures.text("xcode/\(name)"))
    }

    static func date(_ text: String) throws -> Date {
        try #require(try? Date(text, strategy: .iso8601))
    }

    @Test func emptyReceiptHasTheStatedFields() throws {
        let signed = try Self.receipt("xcode-app-receipt-empty")
        let receipt = signed.receipt
        #expect(receipt.receiptType == .xcode)
        #expect(receipt.receiptType?.environment == .xcode)
        #expect(receipt.appItemID == 0)
        #expect(receipt.bundleID == Self.bundleID)
        #expect(receipt.applicationVersion == "1")
        #expect(receipt.creationDate == (try Self.date("2023-10-19T01:18:54Z")))
        #expect(receipt.expirationDate == (try Self.date("4001-01-01T00:00:00Z")))
        #expect(receipt.opaqueValue.count == 8)
        #expect(receipt.sha1Hash.count == 20)
        #expect(receipt.inAppPurchases.isEmpty)
        #expect(receipt.otherAttributes.map(\.type) == [8])
        #expect(signed.certificates.count == 1)
        #expect(signed.digestAlgorithm.sameAlgorithm(as: .sha256))
        #expect(signed.signatureAlgorithm.sameAlgorithm(as: .sha256WithRSAEncryption))
        #expect(signed.signerInfo.signedAttributes == nil)
    }

    @Test func receiptWithTransactionHasTheStatedPurchase() throws {
        let receipt = try Self.receipt("xcode-app-receipt-with-transaction").receipt
        #expect(receipt.bundleID == Self.bundleID)
        #expect(receipt.applicationVersion == "1")
        let purchase = try #require(receipt.inAppPurchases.first)
        #expect(receipt.inAppPurchases.count == 1)
        #expect(purchase.productID == "pass.premium")
        #expect(purchase.transactionID == "0")
        #expect(purchase.quantity == 1)
        #expect(purchase.purchaseDate == (try Self.date("2023-10-19T01:45:36Z")))
        #expect(purchase.expiresDate == (try Self.date("2023-11-19T01:45:36Z")))
        #expect(purchase.isInIntroOfferPeriod == true)
        #expect(purchase.originalTransactionID == nil)
        #expect(purchase.cancellationDate == nil)
    }

    @Test(arguments: ["xcode-app-receipt-empty", "xcode-app-receipt-with-transaction"])
    func signatureVerifiesWhenXcodeIsTrusted(name: String) async throws {
        let signed = try Self.receipt(name)
        let result = try await signed.verify(trustsXcodeSigning: true, bundleID: Self.bundleID, environment: .xcode)
        #expect(result.signatureVerified)
        #expect(!result.chainVerified)
        #expect(result.root == nil)
        #expect(result.validationTime == signed.receipt.creationDate)
        #expect(result.receipt == signed.receipt)
    }

    @Test(arguments: ["xcode-app-receipt-empty", "xcode-app-receipt-with-transaction"])
    func rejectedWhenXcodeIsNotTrusted(name: String) async throws {
        let signed = try Self.receipt(name)
        await #expect(throws: AppStoreSecurityError(.invalidChainLength)) { try await signed.verify() }
        await #expect(throws: AppStoreSecurityError(.invalidChainLength)) {
            try await signed.verify(roots: AppleRootCertificates.receiptRoots + AppleRootCertificates.jwsRoots)
        }
    }

    @Test func appChecksApplyToXcodeReceipts() async throws {
        let signed = try Self.receipt("xcode-app-receipt-empty")
        await #expect(throws: AppStoreSecurityError(.wrongBundleID)) {
            try await signed.verify(trustsXcodeSigning: true, bundleID: "com.example")
        }
        await #expect(throws: AppStoreSecurityError(.wrongEnvironment)) {
            try await signed.verify(trustsXcodeSigning: true, environment: .sandbox)
        }
    }

    @Test func transactionIDsAreExtractedAsAppleDoes() throws {
        let withTransaction = try SharedFixtures.text("xcode/xcode-app-receipt-with-transaction")
        let empty = try SharedFixtures.text("xcode/xcode-app-receipt-empty")
        #expect(try ReceiptTransactionIDExtractor.transactionID(inAppReceipt: withTransaction) == "0")
        #expect(try ReceiptTransactionIDExtractor.transactionID(inAppReceipt: empty) == nil)
    }

    @Test func legacyTransactionReceiptGivesItsTransactionID() throws {
        let text = try SharedFixtures.text("mock_signed_data/legacyTransaction")
        #expect(try ReceiptTransactionIDExtractor.transactionID(inTransactionReceipt: text) == "33993399")
        #expect(throws: AppStoreSecurityError(.malformedInput)) { try SignedAppReceipt(base64Encoded: text) }
    }

    @Test(arguments: ["xcode-app-receipt-empty", "xcode-app-receipt-with-transaction"])
    func payloadSerializesBackToApplesBytes(name: String) throws {
        let signed = try Self.receipt(name)
        #expect(signed.receipt.serializedPayload() == signed.payload)
        #expect(signed.receipt.bundleIDBytes.first == 0x0C)
    }

    @Test(arguments: ["xcode-app-receipt-empty", "xcode-app-receipt-with-transaction"])
    func reencodingAsDERKeepsTheSignatureValid(name: String) async throws {
        let signed = try Self.receipt(name)
        let der = try signed.signedData.serializedDER()
        let reparsed = try SignedAppReceipt(bytes: der)
        #expect(reparsed.receipt == signed.receipt)
        #expect(reparsed.signedData == signed.signedData)
        _ = try await reparsed.verify(trustsXcodeSigning: true)
    }

    @Test func tamperedRSASignaturesAndContentAreBad() async throws {
        let signed = try Self.receipt("xcode-app-receipt-with-transaction")
        let changes: [(inout [UInt8]) -> Void] = [
            { $0[0] ^= 0x01 }, { $0[$0.count - 1] ^= 0x80 }, { $0.removeLast() }, { $0.append(0) }, { $0 = [] },
        ]
        for change in changes {
            var signedData = signed.signedData
            change(&signedData.signerInfos[0].signature)
            let tampered = try SignedAppReceipt(bytes: signedData.serializedDER())
            await #expect(throws: AppStoreSecurityError(.badSignature)) { try await tampered.verify(trustsXcodeSigning: true) }
        }
        var receipt = signed.receipt
        receipt.inAppPurchases[0].productID = "pass.free"
        var signedData = signed.signedData
        signedData.content = receipt.serializedPayload()
        let tampered = try SignedAppReceipt(bytes: signedData.serializedDER())
        #expect(tampered.receipt.inAppPurchases.first?.productID == "pass.free")
        await #expect(throws: AppStoreSecurityError(.badSignature)) { try await tampered.verify(trustsXcodeSigning: true) }
    }

    @Test func everyByteFlipFailsCleanly() async throws {
        let bytes = try #require(
            Data(
                base64Encoded: SharedFixtures.text("xcode/xcode-app-receipt-empty").filter { !$0.isWhitespace })
        )
        for index in bytes.indices {
            var changed = bytes
            changed[index] ^= 0x04
            guard let parsed = try? SignedAppReceipt(bytes: changed) else { continue }
            _ = try? await parsed.verify(trustsXcodeSigning: true)
        }
    }

    @Test func everyPrefixIsMalformed() throws {
        let bytes = try #require(
            Data(
                base64Encoded: SharedFixtures.text("xcode/xcode-app-receipt-with-transaction")
                    .filter { !$0.isWhitespace }))
        for length in 0..<bytes.count {
            #expect(throws: AppStoreSecurityError(.malformedInput), "prefix of \(length) bytes") {
                try SignedAppReceipt(bytes: bytes.prefix(length))
            }
        }
    }
}
