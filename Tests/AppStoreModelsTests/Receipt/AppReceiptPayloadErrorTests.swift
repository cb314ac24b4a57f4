import AppStoreModels
import Foundation
import Testing

@Suite struct AppReceiptPayloadErrorTests {
    static func minimal(except skipped: Int? = nil, replacing replaced: (Int, [UInt8])? = nil) -> [UInt8] {
        let attributes: [(Int, [UInt8])] = [
            (2, ReceiptTLV.utf8("com.example")), (3, ReceiptTLV.utf8("1")), (4, [1, 2]), (5, [3, 4]),
        ]
        var elements = attributes.filter { $0.0 != skipped }.map { ReceiptTLV.attribute($0.0, $0.1) }
        if let replaced { elements.append(ReceiptTLV.attribute(replaced.0, replaced.1)) }
        return ReceiptTLV.set(elements)
    }

    @Test func minimalPayloadParses() throws {
        let receipt = try AppReceipt(payloadDER: Self.minimal())
        #expect(receipt.bundleID == "com.example")
        #expect(receipt.receiptType == nil)
        #expect(receipt.inAppPurchases.isEmpty)
    }

    @Test(arguments: [2, 3, 4, 5])
    func missingRequiredAttribute(type: Int) {
        #expect(throws: ReceiptPayloadError.self) { try AppReceipt(payloadDER: Self.minimal(except: type)) }
    }

    @Test(arguments: [
        (1, ReceiptTLV.utf8("12")),
        (12, ReceiptTLV.integer(5)),
        (12, ReceiptTLV.ia5("19 Oct 2023")),
        (21, ReceiptTLV.ia5("2023-02-29T00:00:00Z")),
        (15, ReceiptTLV.encode(0x02, Array(repeating: 0x7F, count: 9))),
        (19, ReceiptTLV.encode(0x0C, [0xFF, 0xFE])),
        (0, [0x0C, 0x05, 0x41]),
        (17, ReceiptTLV.set([ReceiptTLV.attribute(1701, ReceiptTLV.integer(1))])),
        (17, ReceiptTLV.utf8("not a set")),
    ])
    func valueOfTheWrongKind(type: Int, value: [UInt8]) {
        #expect(throws: ReceiptPayloadError.self) {
            try AppReceipt(payloadDER: Self.minimal(replacing: (type, value)))
        }
    }

    @Test func wrongShapes() {
        let shapes: [[UInt8]] = [
            [],
            [0x30, 0x00],
            [0x31, 0x03, 0x02, 0x01, 0x01],
            ReceiptTLV.set([ReceiptTLV.encode(0x30, ReceiptTLV.integer(2) + ReceiptTLV.integer(1))]),
            ReceiptTLV.set([
                ReceiptTLV.encode(0x30, ReceiptTLV.integer(2) + ReceiptTLV.integer(1) + ReceiptTLV.utf8("x"))
            ]),
            ReceiptTLV.set([
                ReceiptTLV.encode(
                    0x30, ReceiptTLV.integer(1 << 62) + ReceiptTLV.integer(1) + ReceiptTLV.encode(0x04, []))
            ]),
        ]
        for bytes in shapes {
            #expect(throws: ReceiptPayloadError.self, "\(bytes)") { try AppReceipt(payloadBER: bytes) }
        }
    }

    @Test func derIsStrictAndBERIsNot() throws {
        let elements = [
            ReceiptTLV.attribute(2, ReceiptTLV.utf8("b")), ReceiptTLV.attribute(3, ReceiptTLV.utf8("1")),
            ReceiptTLV.attribute(4, []), ReceiptTLV.attribute(5, []),
        ]
        let indefinite = ReceiptTLV.indefiniteSet(elements)
        #expect(throws: ReceiptPayloadError.self) { try AppReceipt(payloadDER: indefinite) }
        #expect(try AppReceipt(payloadBER: indefinite) == AppReceipt(payloadDER: ReceiptTLV.set(elements)))
    }

    @Test func everyPrefixAndRandomBytesFailCleanly() throws {
        let payload = AppReceiptPayloadTests.fullReceipt().serializedPayload()
        for length in 0..<payload.count {
            #expect(throws: ReceiptPayloadError.self) { try AppReceipt(payloadBER: payload.prefix(length)) }
        }
        var state: UInt64 = 42
        for count in [1, 2, 5, 50, 500] {
            for _ in 0..<50 {
                let bytes = (0..<count).map { _ -> UInt8 in
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    return UInt8(truncatingIfNeeded: state >> 33)
                }
                #expect(throws: ReceiptPayloadError.self) { try AppReceipt(payloadBER: [0x31, 0x80] + bytes) }
            }
        }
    }
}
