import AppStoreModels
import Foundation
import Testing

@Suite struct AppReceiptPayloadTests {
    static let created = Date(timeIntervalSince1970: 1_697_678_334)  // 2023-10-19T01:18:54Z

    static func fullReceipt() -> AppReceipt {
        AppReceipt(
            receiptType: .production, appItemID: 1_234_567_890, bundleID: "com.example.app", applicationVersion: "3.1",
            opaqueValue: Data([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]),
            sha1Hash: Data(repeating: 0x5A, count: 20), ageRating: "12+", creationDate: created,
            downloadID: -1, versionExternalIdentifier: 99,
            inAppPurchases: [
                InAppPurchaseReceipt(
                    quantity: 2, productID: "gems", transactionID: "1000000000000001",
                    purchaseDate: created.addingTimeInterval(-100), originalTransactionID: "1000000000000001",
                    originalPurchaseDate: created.addingTimeInterval(-100), productType: 0),
                InAppPurchaseReceipt(
                    productID: "monthly", transactionID: "1000000000000005",
                    purchaseDate: created.addingTimeInterval(-50.5),
                    originalTransactionID: "1000000000000002", originalPurchaseDate: created.addingTimeInterval(-9_000),
                    productType: 3, expiresDate: created.addingTimeInterval(2_592_000),
                    webOrderLineItemID: 1_000_000_077_777,
                    cancellationDate: created.addingTimeInterval(-1), isTrialPeriod: true, isInIntroOfferPeriod: false,
                    promotionalOfferIdentifier: "spring"),
                InAppPurchaseReceipt(productID: "gems", transactionID: "1000000000000009", purchaseDate: created),
            ],
            originalPurchaseDate: created.addingTimeInterval(-86_400), originalApplicationVersion: "1.0",
            expirationDate: Date(timeIntervalSince1970: 64_060_588_800),
            otherAttributes: [ReceiptAttribute(type: 25, version: 3, value: Data([0x02, 0x01, 0x07]))])
    }

    @Test func builtPayloadRoundTrips() throws {
        let receipt = Self.fullReceipt()
        let der = receipt.serializedPayload()
        #expect(der.first == 0x31)
        #expect(try AppReceipt(payloadDER: der) == receipt)
        #expect(try AppReceipt(payloadBER: der) == receipt)
        #expect(try AppReceipt(payloadDER: der).serializedPayload() == der)
        let types = try ReceiptAttribute.attributes(inSet: der).map(\.type)
        #expect(types == [0, 1, 2, 3, 4, 5, 10, 12, 15, 16, 17, 17, 17, 18, 19, 21, 25])
    }

    @Test func innerEncodingsAreApples() throws {
        let attributes = try ReceiptAttribute.attributes(inSet: Self.fullReceipt().serializedPayload())
        func value(_ type: Int) throws -> [UInt8] { Array(try #require(attributes.first { $0.type == type }).value) }
        #expect(try value(0) == ReceiptTLV.utf8("Production"))
        #expect(try value(1) == ReceiptTLV.integer(1_234_567_890))
        #expect(try value(2) == ReceiptTLV.utf8("com.example.app"))
        #expect(try value(4) == Array(1...16))
        #expect(try value(10) == ReceiptTLV.ia5("12+"))
        #expect(try value(12) == ReceiptTLV.ia5("2023-10-19T01:18:54Z"))
        #expect(try value(21) == ReceiptTLV.ia5("4000-01-01T00:00:00Z"))
        #expect(attributes.allSatisfy { $0.version == ($0.type == 25 ? 3 : 1) })
        let second = try ReceiptAttribute.attributes(inSet: attributes.filter { $0.type == 17 }[1].value)
        #expect(second.map(\.type) == [1701, 1702, 1703, 1704, 1705, 1706, 1707, 1708, 1711, 1712, 1713, 1719, 1721])
        #expect(Array(second[3].value) == ReceiptTLV.ia5("2023-10-19T01:18:03.500Z"))
        #expect(Array(second[10].value) == ReceiptTLV.integer(1))
        #expect(Array(second[11].value) == ReceiptTLV.integer(0))
        #expect(second[2].stringValue == "1000000000000005")
    }

    /// A payload written the way real receipts are: unsorted, version 2, PrintableString,
    /// empty dates, reserved and unknown types, fractional seconds.
    static let appleStyle: [UInt8] = ReceiptTLV.set([
        ReceiptTLV.attribute(12, ReceiptTLV.ia5("2023-10-19T01:18:54.250Z")),
        ReceiptTLV.attribute(4, version: 2, [0xDE, 0xAD, 0xBE, 0xEF]),
        ReceiptTLV.attribute(
            17,
            ReceiptTLV.set([
                ReceiptTLV.attribute(1712, ReceiptTLV.ia5("")),
                ReceiptTLV.attribute(1703, ReceiptTLV.utf8("7")),
                ReceiptTLV.attribute(1709, ReceiptTLV.utf8("")),
                ReceiptTLV.attribute(1701, ReceiptTLV.integer(1)),
                ReceiptTLV.attribute(1704, ReceiptTLV.ia5("2023-10-19T01:45:36+02:00")),
                ReceiptTLV.attribute(1702, ReceiptTLV.printable("pass.premium")),
                ReceiptTLV.attribute(1705, ReceiptTLV.utf8("7")),
            ])),
        ReceiptTLV.attribute(2, ReceiptTLV.printable("com.example")),
        ReceiptTLV.attribute(6, [0x01, 0x02, 0x03]),
        ReceiptTLV.attribute(3, ReceiptTLV.utf8("1")),
        ReceiptTLV.attribute(18, ReceiptTLV.ia5("")),
        ReceiptTLV.attribute(5, Array(repeating: 0x11, count: 20)),
        ReceiptTLV.attribute(
            17,
            ReceiptTLV.set([
                ReceiptTLV.attribute(1704, ReceiptTLV.ia5("2023-10-20T00:00:00Z")),
                ReceiptTLV.attribute(1703, ReceiptTLV.utf8("8")),
                ReceiptTLV.attribute(1702, ReceiptTLV.utf8("coins")),
                ReceiptTLV.attribute(1701, ReceiptTLV.integer(5)),
            ])),
        ReceiptTLV.attribute(3, ReceiptTLV.utf8("duplicate")),
        ReceiptTLV.attribute(0, ReceiptTLV.utf8("ProductionVPPSandbox")),
    ])

    @Test func appleStyleEncodingsAreRead() throws {
        let receipt = try AppReceipt(payloadDER: Self.appleStyle)
        #expect(receipt.receiptType == .productionVPPSandbox)
        #expect(receipt.receiptType?.environment == .sandbox)
        #expect(receipt.bundleID == "com.example")
        #expect(receipt.bundleIDBytes == Data(ReceiptTLV.printable("com.example")))
        #expect(receipt.applicationVersion == "1")
        #expect(receipt.opaqueValue == Data([0xDE, 0xAD, 0xBE, 0xEF]))
        #expect(receipt.creationDate == Date(timeIntervalSince1970: 1_697_678_334.25))
        #expect(receipt.originalPurchaseDate == nil)
        #expect(receipt.otherAttributes.map(\.type) == [3, 6])
        #expect(receipt.otherAttributes.first?.stringValue == "duplicate")
        #expect(receipt.inAppPurchases.map(\.transactionID) == ["7", "8"])
        let first = receipt.inAppPurchases[0]
        #expect(first.productID == "pass.premium")
        #expect(first.purchaseDate == Date(timeIntervalSince1970: 1_697_672_736))
        #expect(first.cancellationDate == nil)
        #expect(first.originalTransactionID == "7")
        #expect(first.otherAttributes.map(\.type) == [1709])
        #expect(receipt.inAppPurchases[1].quantity == 5)
    }

    @Test func appleStyleAttributesAreAllWrittenBack() throws {
        let receipt = try AppReceipt(payloadDER: Self.appleStyle)
        let written = receipt.serializedPayload()
        #expect(try AppReceipt(payloadDER: written) == receipt)

        let original = try ReceiptAttribute.attributes(inSet: Self.appleStyle)
        let again = try ReceiptAttribute.attributes(inSet: written)
        #expect(Self.sortedOutside17(again) == Self.sortedOutside17(original))
        let originalPurchases = try original.filter { $0.type == 17 }.map {
            try ReceiptAttribute.attributes(inSet: $0.value)
        }
        let writtenPurchases = try again.filter { $0.type == 17 }.map {
            try ReceiptAttribute.attributes(inSet: $0.value)
        }
        #expect(writtenPurchases.map(Self.sorted) == originalPurchases.map(Self.sorted))
    }

    @Test func changedFieldsUseTheModelsEncoding() throws {
        var receipt = try AppReceipt(payloadDER: Self.appleStyle)
        receipt.bundleID = "com.example.other"
        receipt.originalPurchaseDate = Self.created
        receipt.inAppPurchases[0].cancellationDate = Self.created
        #expect(receipt.bundleIDBytes == Data(ReceiptTLV.utf8("com.example.other")))
        let reparsed = try AppReceipt(payloadDER: receipt.serializedPayload())
        #expect(reparsed.bundleID == "com.example.other")
        #expect(reparsed.originalPurchaseDate == Self.created)
        #expect(reparsed.inAppPurchases[0].cancellationDate == Self.created)
        #expect(reparsed.opaqueValue == Data([0xDE, 0xAD, 0xBE, 0xEF]))
        let opaque = try #require(
            try ReceiptAttribute.attributes(inSet: receipt.serializedPayload()).first { $0.type == 4 })
        #expect(opaque.version == 2)
    }

    static func sorted(_ attributes: [ReceiptAttribute]) -> [ReceiptAttribute] {
        attributes.sorted { lhs, rhs in
            if lhs.type != rhs.type { return lhs.type < rhs.type }
            if lhs.version != rhs.version { return lhs.version < rhs.version }
            return lhs.value.lexicographicallyPrecedes(rhs.value)
        }
    }

    static func sortedOutside17(_ attributes: [ReceiptAttribute]) -> [ReceiptAttribute] {
        sorted(attributes.filter { $0.type != 17 })
    }
}
