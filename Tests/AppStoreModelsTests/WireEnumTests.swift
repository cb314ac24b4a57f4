import AppStoreModels
import Foundation
import Testing

@Suite struct WireEnumTests {
    @Test func unknownValueSurvivesRoundTrip() throws {
        let data = Data(#"["Sandbox","Martian"]"#.utf8)
        let values = try JSONDecoder().decode([AppStoreEnvironment].self, from: data)
        #expect(values[0] == .sandbox)
        #expect(values[0].isKnown)
        #expect(!values[1].isKnown)
        #expect(values[1].rawValue == "Martian")
        #expect(try JSONEncoder().encode(values) == data)
    }

    /// The enumerations Apple extended most recently must not lose a payload over a value added later.
    @Test func newerPayloadEnumsKeepUnknownValues() throws {
        let transactionJSON = Data(
            #"{"revocationType":"REFUND_STORE_CREDIT","revocationPercentage":25000,"billingPlanType":"QUARTERLY","offerDiscountType":"BUY_ONE_GET_ONE","appTransactionId":"9","offerPeriod":"P6M"}"#
                .utf8)
        let transaction = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: transactionJSON)
        #expect(transaction.revocationType == RevocationType("REFUND_STORE_CREDIT"))
        #expect(transaction.revocationType?.isKnown == false)
        #expect(transaction.billingPlanType?.rawValue == "QUARTERLY")
        #expect(transaction.offerDiscountType?.isKnown == false)
        #expect(transaction.revocationPercentage == 25000)
        #expect(
            try JSONDecoder().decode(
                JWSTransactionDecodedPayload.self, from: JSONEncoder().encode(transaction)) == transaction)

        let app = try JSONDecoder().decode(
            AppTransaction.self, from: Data(#"{"originalPlatform":"watchOS","appTransactionId":"9"}"#.utf8))
        #expect(app.originalPlatform == Platform("watchOS"))
        #expect(app.originalPlatform?.isKnown == false)

        let renewal = try JSONDecoder().decode(
            JWSRenewalInfoDecodedPayload.self,
            from: Data(
                #"{"renewalBillingPlanType":"WEEKLY","offerDiscountType":"FREE_TRIAL","eligibleWinBackOfferIds":[],"renewalPrice":0,"currency":"EUR"}"#
                    .utf8))
        #expect(renewal.renewalBillingPlanType?.isKnown == false)
        #expect(renewal.offerDiscountType == .freeTrial)
        #expect(renewal.eligibleWinBackOfferIDs == [])
        #expect(renewal.renewalPriceAmount == 0)
    }
}
