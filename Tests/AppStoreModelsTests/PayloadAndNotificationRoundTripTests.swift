import AppStoreModels
import Foundation
import Testing

let payloadAndNotificationSamples: [RoundTripCase] = [
    .of(
        JWSTransactionDecodedPayload.self,
        #"""
        {"transactionId":"2000000111","originalTransactionId":"2000000100","webOrderLineItemId":"2000000055",
         "bundleId":"dev.kakin.demo","productId":"dev.kakin.demo.monthly","subscriptionGroupIdentifier":"21000001",
         "purchaseDate":1700000000000,"originalPurchaseDate":1690000000000,"expiresDate":1702592000000,
         "quantity":1,"type":"Auto-Renewable Subscription","appAccountToken":"0c5a1f38-2a5b-4b53-9a07-4a3f3a6d0c11",
         "inAppOwnershipType":"FAMILY_SHARED","signedDate":1700000001000,"revocationReason":0,
         "revocationDate":1700500000000,"isUpgraded":false,"offerType":4,"offerIdentifier":"comeback",
         "environment":"Sandbox","storefront":"JPN","storefrontId":"143462","transactionReason":"RENEWAL",
         "currency":"JPY","price":480000,"offerDiscountType":"FREE_TRIAL","appTransactionId":"704",
         "offerPeriod":"P2W","revocationType":"REFUND_FULL","revocationPercentage":100000,
         "advancedCommerceInfo":{"period":"P1M","items":[{"SKU":"a","price":1}]},"billingPlanType":"BILLED_UPFRONT",
         "commitmentInfo":{"billingPeriodNumber":1,"commitmentExpiresDate":1731536000000,"commitmentPrice":5760000,
           "totalBillingPeriods":12},
         "deviceVerification":"AAAA","deviceVerificationNonce":"2f3c0b5e-9d8a-4a57-8d6e-3f1a2b3c4d5e"}
        """#),
    .of(
        JWSRenewalInfoDecodedPayload.self,
        #"""
        {"expirationIntent":2,"originalTransactionId":"2000000100","autoRenewProductId":"dev.kakin.demo.yearly",
         "productId":"dev.kakin.demo.monthly","autoRenewStatus":0,"isInBillingRetryPeriod":false,
         "priceIncreaseStatus":1,"gracePeriodExpiresDate":1700600000000,"offerType":3,"offerIdentifier":"SPRING",
         "signedDate":1700000001000,"environment":"Production","recentSubscriptionStartDate":1690000000000,
         "renewalDate":1702592000000,"currency":"EUR","renewalPrice":4990,"offerDiscountType":"PAY_UP_FRONT",
         "eligibleWinBackOfferIds":["comeback"],"appAccountToken":"0c5a1f38-2a5b-4b53-9a07-4a3f3a6d0c11",
         "appTransactionId":"704","offerPeriod":"P3M","advancedCommerceInfo":{"taxCode":"C"},
         "commitmentInfo":{"commitmentAutoRenewProductId":"dev.kakin.demo.yearly","commitmentAutoRenewStatus":1,
           "commitmentRenewalBillingPlanType":"MONTHLY","commitmentRenewalDate":1731536000000,
           "commitmentRenewalPrice":59880},
         "renewalBillingPlanType":"MONTHLY","deviceVerification":"BBBB",
         "deviceVerificationNonce":"2f3c0b5e-9d8a-4a57-8d6e-3f1a2b3c4d5e"}
        """#),
    .of(
        AppTransaction.self,
        #"""
        {"receiptType":"Production","appAppleId":6400000001,"bundleId":"dev.kakin.demo","applicationVersion":"42",
         "versionExternalIdentifier":861234567,"receiptCreationDate":1700000000000,
         "originalPurchaseDate":1600000000000,"originalApplicationVersion":"1","deviceVerification":"CCCC",
         "deviceVerificationNonce":"2f3c0b5e-9d8a-4a57-8d6e-3f1a2b3c4d5e","preorderDate":1599000000000,
         "appTransactionId":"704","originalPlatform":"visionOS","requestDate":1700000000500}
        """#),
    .of(
        TransactionCommitmentInfo.self,
        #"{"billingPeriodNumber":2,"commitmentExpiresDate":1731536000000,"commitmentPrice":100,"totalBillingPeriods":6}"#
    ),
    .of(
        RenewalCommitmentInfo.self,
        #"{"commitmentAutoRenewProductId":"p","commitmentAutoRenewStatus":0,"commitmentRenewalDate":1731536000000}"#),
    .of(
        RenewalCommitmentInfo.self,
        #"{"commitmentRenewalBillingPlanType":"BILLED_UPFRONT","commitmentRenewalPrice":119990}"#),
    .of(ResponseBodyV2.self, #"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9.e30.c2ln"}"#),
    .of(
        ResponseBodyV2DecodedPayload.self,
        #"""
        {"notificationType":"DID_RENEW","subtype":"BILLING_RECOVERY","notificationUUID":"6a0f6f3e-1a2b-4c3d-8e9f-0a1b2c3d4e5f",
         "data":{"appAppleId":6400000001,"bundleId":"dev.kakin.demo","bundleVersion":"42","environment":"Production",
           "signedTransactionInfo":"t.t.t","signedRenewalInfo":"r.r.r","status":1},
         "version":"2.0","signedDate":1700000002000}
        """#),
    .of(
        NotificationData.self,
        #"""
        {"appAppleId":1,"bundleId":"b","bundleVersion":"1","environment":"Sandbox","signedTransactionInfo":"t",
         "signedRenewalInfo":"r","status":4,"consumptionRequestReason":"LEGAL"}
        """#),
    .of(
        Summary.self,
        #"""
        {"environment":"Sandbox","appAppleId":1,"bundleId":"b","productId":"p","requestIdentifier":"r",
         "storefrontCountryCodes":["FRA"],"succeededCount":10,"failedCount":0}
        """#),
    .of(
        ExternalPurchaseToken.self,
        #"{"externalPurchaseId":"SANDBOX_1","tokenCreationDate":1700000000000,"appAppleId":1,"bundleId":"b"}"#),
    .of(AppData.self, #"{"appAppleId":1,"bundleId":"b","environment":"Xcode","signedAppTransactionInfo":"a.a.a"}"#),
]

@Suite struct PayloadAndNotificationRoundTripTests {
    @Test(arguments: payloadAndNotificationSamples)
    func sampleRoundTrips(_ sample: RoundTripCase) throws {
        let result = try sample.check()
        #expect(result.equal)
        #expect(result.differences.isEmpty, "\(result.differences.joined(separator: "; "))")
    }

    @Test func unknownNotificationTypeAndExtraKeysSurvive() throws {
        let json = #"""
            {"notificationType":"FUTURE_TYPE","subtype":"FUTURE_SUBTYPE","version":"3.0","futureKey":{"a":1},
             "data":{"status":9,"environment":"Mars","consumptionRequestReason":"WHIM"}}
            """#
        let payload = try JSONDecoder().decode(ResponseBodyV2DecodedPayload.self, from: Data(json.utf8))
        #expect(payload.notificationType?.rawValue == "FUTURE_TYPE")
        #expect(payload.notificationType?.isKnown == false)
        #expect(payload.subtype == NotificationSubtype("FUTURE_SUBTYPE"))
        #expect(payload.data?.status?.rawValue == 9)
        #expect(payload.data?.status?.grantsAccess == false)
        let encoded = try JSONComparison.parse(try JSONEncoder().encode(payload))
        #expect(encoded["notificationType"] == "FUTURE_TYPE")
        #expect(encoded["data"]?["environment"] == "Mars")
        #expect(encoded["data"]?["consumptionRequestReason"] == "WHIM")
        #expect(encoded["futureKey"] == nil, "unknown keys are ignored, not kept")
    }

    @Test func transactionToleratesUnknownKeys() throws {
        let json = #"{"transactionId":"1","someFutureField":[1,2,3],"type":"Future Product","offerType":9}"#
        let transaction = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: Data(json.utf8))
        #expect(transaction.transactionID == "1")
        #expect(transaction.type?.rawValue == "Future Product")
        #expect(transaction.offerType?.rawValue == 9)
    }

    @Test func signedPayloadPrefersDataThenSummaryThenTokenThenAppData() {
        var payload = ResponseBodyV2DecodedPayload(
            data: NotificationData(appAppleID: 1, bundleID: "data", environment: .sandbox),
            summary: Summary(environment: .production, appAppleID: 2, bundleID: "summary"),
            externalPurchaseToken: ExternalPurchaseToken(externalPurchaseID: "x", appAppleID: 3, bundleID: "token"),
            appData: AppData(appAppleID: 4, bundleID: "app", environment: .xcode))
        #expect(payload.signedPayloadBundleID == "data")
        payload.data = nil
        #expect(payload.signedPayloadBundleID == "summary")
        #expect(payload.signedPayloadEnvironment == .production)
        payload.summary = nil
        #expect(payload.signedPayloadBundleID == "token")
        #expect(payload.signedPayloadAppAppleID == 3)
        #expect(payload.signedPayloadEnvironment == .production)
        payload.externalPurchaseToken = nil
        #expect(payload.signedPayloadBundleID == "app")
        #expect(payload.signedPayloadEnvironment == .xcode)
        payload.appData = nil
        #expect(payload.signedPayloadBundleID == nil)
        #expect(payload.signedPayloadEnvironment == nil)
    }

    @Test func dataWithoutBundleIDDoesNotFallThrough() {
        let payload = ResponseBodyV2DecodedPayload(
            data: NotificationData(), summary: Summary(bundleID: "summary"))
        #expect(payload.signedPayloadBundleID == nil)
    }

    @Test func memberwiseValuesEncodeAsApple() throws {
        let transaction = JWSTransactionDecodedPayload(
            transactionID: "7", purchaseDate: Date(epochMilliseconds: 1_700_000_000_000), type: .consumable,
            price: 1990)
        let json = try JSONComparison.parse(try JSONEncoder().encode(transaction))
        #expect(json == ["transactionId": "7", "purchaseDate": 1_700_000_000_000, "type": "Consumable", "price": 1990])
    }
}
