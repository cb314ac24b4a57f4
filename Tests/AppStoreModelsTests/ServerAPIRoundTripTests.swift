import AppStoreModels
import Foundation
import Testing

let serverAPISamples: [RoundTripCase] = [
    .of(TransactionInfoResponse.self, #"{"signedTransactionInfo":"t.t.t"}"#),
    .of(AppTransactionInfoResponse.self, #"{"signedAppTransactionInfo":"a.a.a"}"#),
    .of(
        HistoryResponse.self,
        #"""
        {"revision":"rev-2","hasMore":false,"bundleId":"dev.kakin.demo","appAppleId":6400000001,
         "environment":"Sandbox","signedTransactions":["t1.t1.t1","t2.t2.t2"]}
        """#),
    .of(
        TransactionHistoryRequest.self,
        #"""
        {"revision":"rev-1","startDate":1690000000000,"endDate":1700000000000,"productId":["a","b"],
         "productType":["AUTO_RENEWABLE","CONSUMABLE"],"sort":"DESCENDING","subscriptionGroupIdentifier":["g"],
         "inAppOwnershipType":"PURCHASED","revoked":false}
        """#),
    .of(
        StatusResponse.self,
        #"""
        {"environment":"Production","bundleId":"b","appAppleId":1,"data":[{"subscriptionGroupIdentifier":"g",
          "lastTransactions":[{"status":3,"originalTransactionId":"o","signedTransactionInfo":"t",
          "signedRenewalInfo":"r"}]}]}
        """#),
    .of(SubscriptionGroupIdentifierItem.self, #"{"subscriptionGroupIdentifier":"g","lastTransactions":[]}"#),
    .of(
        LastTransactionsItem.self,
        #"{"status":4,"originalTransactionId":"o","signedTransactionInfo":"t","signedRenewalInfo":"r"}"#),
    .of(OrderLookupResponse.self, #"{"status":0,"signedTransactions":["t"]}"#),
    .of(RefundHistoryResponse.self, #"{"signedTransactions":[],"revision":"r","hasMore":false}"#),
    .of(ExtendRenewalDateRequest.self, #"{"extendByDays":30,"extendReasonCode":3,"requestIdentifier":"req-1"}"#),
    .of(
        ExtendRenewalDateResponse.self,
        #"{"originalTransactionId":"o","webOrderLineItemId":"w","success":false,"effectiveDate":1700000000000}"#),
    .of(
        MassExtendRenewalDateRequest.self,
        #"""
        {"extendByDays":7,"extendReasonCode":1,"requestIdentifier":"req-2","storefrontCountryCodes":["USA","CAN"],
         "productId":"dev.kakin.demo.monthly"}
        """#),
    .of(MassExtendRenewalDateResponse.self, #"{"requestIdentifier":"req-2"}"#),
    .of(
        MassExtendRenewalDateStatusResponse.self,
        #"{"requestIdentifier":"req-2","complete":false,"succeededCount":0,"failedCount":0}"#),
    .of(
        ConsumptionRequest.self,
        #"""
        {"customerConsented":true,"sampleContentProvided":false,"deliveryStatus":"UNDELIVERED_SERVER_OUTAGE",
         "consumptionPercentage":25000,"refundPreference":"GRANT_PRORATED"}
        """#),
    .of(
        ConsumptionRequestV1.self,
        #"""
        {"customerConsented":true,"consumptionStatus":2,"platform":1,"sampleContentProvided":true,
         "deliveryStatus":0,"appAccountToken":"","accountTenure":7,"playTime":3,"lifetimeDollarsRefunded":1,
         "lifetimeDollarsPurchased":4,"userStatus":1,"refundPreference":2}
        """#),
    .of(SendTestNotificationResponse.self, #"{"testNotificationToken":"tok"}"#),
    .of(
        CheckTestNotificationResponse.self,
        #"""
        {"signedPayload":"p.p.p","sendAttempts":[{"attemptDate":1700000000000,"sendAttemptResult":"TLS_ISSUE"}],
         "firstSendAttemptResult":"TLS_ISSUE"}
        """#),
    .of(SendAttemptItem.self, #"{"attemptDate":1700000000000,"sendAttemptResult":"UNSUCCESSFUL_HTTP_RESPONSE_CODE"}"#),
    .of(
        NotificationHistoryRequest.self,
        #"""
        {"startDate":1690000000000,"endDate":1700000000000,"notificationType":"REFUND",
         "notificationSubtype":"SUMMARY","transactionId":"t","onlyFailures":true}
        """#),
    .of(
        NotificationHistoryResponse.self,
        #"""
        {"paginationToken":"next","hasMore":false,"notificationHistory":[{"signedPayload":"p",
          "sendAttempts":[{"attemptDate":1700000000000,"sendAttemptResult":"SUCCESS"}]}]}
        """#),
    .of(NotificationHistoryResponseItem.self, #"{"signedPayload":"p","sendAttempts":[]}"#),
    .of(UpdateAppAccountTokenRequest.self, #"{"appAccountToken":"0c5a1f38-2a5b-4b53-9a07-4a3f3a6d0c11"}"#),
    .of(APIErrorResponse.self, #"{"errorCode":4000030,"errorMessage":"Invalid request. The revoked is invalid."}"#),
]

@Suite struct ServerAPIRoundTripTests {
    @Test(arguments: serverAPISamples)
    func sampleRoundTrips(_ sample: RoundTripCase) throws {
        let result = try sample.check()
        #expect(result.equal)
        #expect(result.differences.isEmpty, "\(result.differences.joined(separator: "; "))")
    }
}

@Suite struct TransactionHistoryQueryTests {
    @Test func queryItemsRepeatListsAndUseMilliseconds() {
        let request = TransactionHistoryRequest(
            revision: "rev", startDate: Date(epochMilliseconds: 1_690_000_000_000),
            endDate: Date(epochMilliseconds: 1_700_000_000_000), productIDs: ["a", "b"],
            productTypes: [.autoRenewable, .nonConsumable], sort: .descending, subscriptionGroupIdentifiers: ["g"],
            inAppOwnershipType: .familyShared, revoked: true)
        let items = request.queryItems().map { "\($0.name)=\($0.value)" }
        #expect(
            items == [
                "revision=rev", "startDate=1690000000000", "endDate=1700000000000", "productId=a", "productId=b",
                "productType=AUTO_RENEWABLE", "productType=NON_CONSUMABLE", "sort=DESCENDING",
                "subscriptionGroupIdentifier=g", "inAppOwnershipType=FAMILY_SHARED", "revoked=true",
            ])
    }

    @Test func emptyRequestHasNoQueryItems() {
        #expect(TransactionHistoryRequest().queryItems().isEmpty)
    }

    @Test func queryItemsParseBack() throws {
        let request = TransactionHistoryRequest(
            startDate: Date(epochMilliseconds: 5), productIDs: ["x"], productTypes: [.consumable], sort: .ascending,
            revoked: false)
        #expect(try TransactionHistoryRequest(queryItems: request.queryItems()) == request)
    }

    @Test(arguments: [
        ("startDate", "yesterday", APIErrorCode.invalidStartDate),
        ("endDate", "1.5", APIErrorCode.invalidEndDate),
        ("revoked", "maybe", APIErrorCode.invalidRevoked),
    ])
    func invalidParametersNameAppleErrorCode(name: String, value: String, code: APIErrorCode) {
        #expect(throws: TransactionHistoryRequest.InvalidQueryParameter(name: name, value: value, errorCode: code)) {
            try TransactionHistoryRequest(queryItems: [(name: name, value: value)])
        }
    }
}

@Suite struct APIErrorCodeTests {
    @Test(arguments: APIErrorCode.knownValues)
    func httpStatusIsTheFirstThreeDigits(_ code: APIErrorCode) throws {
        let status = try #require(code.httpStatus)
        #expect(String(code.rawValue).hasPrefix(String(status)))
        // 409: the Retention Messaging API's identifiers uploaded already.
        #expect([400, 403, 404, 409, 429, 500].contains(status))
    }

    @Test func onlyRetryableCodesAreRetryable() {
        let retryable = APIErrorCode.knownValues.filter(\.isRetryable).map(\.rawValue).sorted()
        #expect(retryable == [4_040_002, 4_040_004, 4_040_006, 4_290_000, 5_000_001])
        #expect(!APIErrorCode.generalInternal.isRetryable)
    }

    @Test func knownValuesAreDistinct() {
        #expect(Set(APIErrorCode.knownValues).count == APIErrorCode.knownValues.count)
        #expect(APIErrorCode.knownValues.count == 61 + 26, "the App Store Server API's and Retention Messaging's")
    }

    @Test func oddCodesHaveNoHTTPStatus() {
        #expect(APIErrorCode(rawValue: 42).httpStatus == nil)
    }
}
