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

    @Test func emptyMeansAbsent() throws {
        #expect(try Self.receipt(creationDate: "").creationDate == nil)
    }

    @Test(arguments: [
        "2023-10-19", "2023-10-19T01:45Z", "2023-10-19T01:45:36", "2023-13-01T00:00:00Z", "2023-02-29T00:00:00Z",
        "2023-10-19T24:00:00Z", "2023-10-19T01:45:36.Z", "2023-10-19T01:45:36ZZ", "2023-10-19T01:45:36+0200",
        "20231019T014536Z", "yesterday",
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
