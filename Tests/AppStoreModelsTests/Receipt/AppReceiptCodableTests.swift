import AppStoreModels
import Foundation
import Testing

@Suite struct AppReceiptCodableTests {
    @Test func jsonRoundTrip() throws {
        var receipt = AppReceiptPayloadTests.fullReceipt()
        receipt.originalEncodings = [ReceiptAttribute(type: 4, version: 2, value: receipt.opaqueValue)]
        let data = try JSONEncoder().encode(receipt)
        #expect(try JSONDecoder().decode(AppReceipt.self, from: data) == receipt)
    }

    @Test func appleStylePayloadSurvivesJSON() throws {
        let receipt = try AppReceipt(payloadDER: AppReceiptPayloadTests.appleStyle)
        let decoded = try JSONDecoder().decode(AppReceipt.self, from: JSONEncoder().encode(receipt))
        #expect(decoded == receipt)
        #expect(decoded.serializedPayload() == receipt.serializedPayload())
        #expect(decoded.bundleIDBytes == receipt.bundleIDBytes)
    }

    @Test func minimalJSONDecodes() throws {
        let json = #"{"bundleID":"b","applicationVersion":"1","receiptType":"ProductionMartian"}"#
        let receipt = try JSONDecoder().decode(AppReceipt.self, from: Data(json.utf8))
        #expect(receipt.receiptType?.rawValue == "ProductionMartian")
        #expect(receipt.receiptType?.isKnown == false)
        #expect(receipt.receiptType?.environment == nil)
        #expect(receipt.inAppPurchases.isEmpty)
        #expect(try AppReceipt(payloadDER: receipt.serializedPayload()) == receipt)
    }

    @Test(arguments: [
        (AppReceiptType.production, AppStoreEnvironment.production),
        (.productionVPP, .production),
        (.productionSandbox, .sandbox),
        (.productionVPPSandbox, .sandbox),
        (.xcode, .xcode),
    ])
    func receiptTypesMapToEnvironments(type: AppReceiptType, environment: AppStoreEnvironment) {
        #expect(type.environment == environment)
        #expect(type.isKnown)
    }
}
