import AppStoreModels
import Foundation
import Testing

/// Dates are RFC 3339 text in an IA5String; these go through the public payload API.
@Suite struct ReceiptDateTests {
    static func receipt(creationDate text: String) throws -> AppReceipt {
        try AppReceipt(
            payloadDER: ReceiptTLV.set([
                ReceiptTLV.attribute(2, ReceiptTLV.utf8("b")), ReceiptTLV.attribute(3, ReceiptTLV.utf8("1")),
                ReceiptTLV.attribute(4, []), ReceiptTLV.attribute(5, []),
                ReceiptTLV.attribute(12, ReceiptTLV.ia5(text)),
            ]))
    }

    @Test(arguments: [
        ("2023-10-19T01:45:36Z", 1_697_679_936.0),
        ("2023-10-19T01:45:36.5Z", 1_697_679_936.5),
        ("2023-10-19T01:45:36.123Z", 1_697_679_936.123),
        ("2023-10-19T01:45:36.000001Z", 1_697_679_936.000001),
        ("2023-10-19T03:45:36+02:00", 1_697_679_936.0),
        ("2023-10-18T20:15:36-05:30", 1_697_679_936.0),
        ("1970-01-01T00:00:00Z", 0.0),
        ("1969-12-31T23:59:59Z", -1.0),
        ("2024-02-29T00:00:00Z", 1_709_164_800.0),
        ("4001-01-01T00:00:00Z", 64_092_211_200.0),
    ])
    func validDates(text: String, seconds: Double) throws {
        let date = try #require(try Self.receipt(creationDate: text).creationDate)
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_001)
    }

    /// Older Xcode versions wrote numeric offsets without the colon RFC 3339 asks for.
    @Test(arguments: [
        ("2020-07-22T18:33:15+0100", 1_595_439_195.0),
        ("2020-07-22T17:33:15+0000", 1_595_439_195.0),
        ("2020-07-22T12:03:15-0530", 1_595_439_195.0),
        ("2020-07-22T18:33:15.250+0100", 1_595_439_195.25),
    ])
    func offsetsWithoutAColon(text: String, seconds: Double) throws {
        let date = try #require(try Self.receipt(creationDate: text).creationDate)
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_001)
    }

    @Test func emptyMeansAbsent() throws {
        #expect(try Self.receipt(creationDate: "").creationDate == nil)
    }

    /// An attribute whose OCTET STRING holds nothing at all, not even an empty string, is no date either.
    @Test func emptyValueMeansAbsent() throws {
        let receipt = try AppReceipt(
            payloadDER: ReceiptTLV.set([
                ReceiptTLV.attribute(2, ReceiptTLV.utf8("b")), ReceiptTLV.attribute(3, ReceiptTLV.utf8("1")),
                ReceiptTLV.attribute(4, []), ReceiptTLV.attribute(5, []), ReceiptTLV.attribute(12, []),
            ]))
        #expect(receipt.creationDate == nil)
    }

    @Test func inAppPurchaseDatesTakeEveryForm() throws {
        let purchase = try InAppPurchaseReceipt(
            payloadBER: ReceiptTLV.set([
                ReceiptTLV.attribute(1701, ReceiptTLV.integer(1)), ReceiptTLV.attribute(1702, ReceiptTLV.utf8("p")),
                ReceiptTLV.attribute(1703, ReceiptTLV.utf8("1")), ReceiptTLV.attribute(1705, ReceiptTLV.utf8("1")),
                ReceiptTLV.attribute(1704, ReceiptTLV.ia5("2020-07-22T18:33:15+0100")),
                ReceiptTLV.attribute(1706, ReceiptTLV.ia5("2020-07-22T17:33:15Z")),
                ReceiptTLV.attribute(1708, ReceiptTLV.ia5("")),
                ReceiptTLV.attribute(1712, ReceiptTLV.ia5("")),
            ]))
        #expect(purchase.purchaseDate == Date(timeIntervalSince1970: 1_595_439_195))
        #expect(purchase.originalPurchaseDate == purchase.purchaseDate)
        #expect(purchase.expiresDate == nil)
        #expect(purchase.cancellationDate == nil)
    }

    @Test(arguments: [
        "2023-10-19", "2023-10-19T01:45Z", "2023-10-19T01:45:36", "2023-13-01T00:00:00Z", "2023-02-29T00:00:00Z",
        "2023-10-19T24:00:00Z", "2023-10-19T01:45:36.Z", "2023-10-19T01:45:36ZZ", "2023-10-19T01:45:36+02",
        "2023-10-19T01:45:36+020", "2023-10-19T01:45:36+02:0", "2023-10-19T01:45:36+2400", "2023-10-19T01:45:36+0260",
        "2023-10-19T01:45:36+02:00Z", "20231019T014536Z", "yesterday", " ",
    ])
    func invalidDates(text: String) {
        #expect(throws: ReceiptPayloadError.self) { try Self.receipt(creationDate: text) }
    }

    @Test(arguments: [0.0, 1_697_679_936, 1_697_679_936.123, -86_400.5, 64_092_211_200])
    func writtenDatesReadBack(seconds: Double) throws {
        let date = Date(timeIntervalSince1970: seconds)
        let receipt = AppReceipt(bundleID: "b", applicationVersion: "1", creationDate: date)
        #expect(try AppReceipt(payloadDER: receipt.serializedPayload()).creationDate == date)
    }
}
