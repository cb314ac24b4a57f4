import AppStoreModels
import Foundation
import KakinTestSupport
import Testing

private func decode<Model: Decodable>(_ type: Model.Type, fixture name: String) throws -> Model {
    try JSONDecoder().decode(type, from: try SharedFixtures.model(name))
}

private func date(_ milliseconds: Int64) -> Date { Date(epochMilliseconds: milliseconds) }

@Suite(.enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
struct AppleFixtureFieldTests {
    @Test func signedTransaction() throws {
        let transaction = try decode(JWSTransactionDecodedPayload.self, fixture: "signedTransaction")
        #expect(transaction.transactionID == "23456")
        #expect(transaction.originalTransactionID == "12345")
        #expect(transaction.webOrderLineItemID == "34343")
        #expect(transaction.bundleID == "com.example")
        #expect(transaction.purchaseDate == date(1_698_148_900_000))
        #expect(transaction.expiresDate == date(1_698_149_000_000))
        #expect(transaction.type == .autoRenewableSubscription)
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.revocationReason == .appIssue)
        #expect(transaction.offerType == .introductory)
        #expect(transaction.environment == .localTesting)
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.storefrontID == "143441")
        #expect(transaction.price == 10990)
        #expect(transaction.priceAmount == Decimal(string: "10.99"))
        #expect(transaction.offerDiscountType == .payAsYouGo)
        #expect(transaction.offerPeriodValue == .oneYear)
        #expect(transaction.billingPlanType == .monthly)
        #expect(transaction.commitmentInfo?.totalBillingPeriods == 12)
        #expect(transaction.commitmentInfo?.commitmentExpiresDate == date(1_698_150_000_000))
        #expect(transaction.advancedCommerceInfo?["taxRate"] == "0.15")
        #expect(transaction.signedPayloadDate == date(1_698_148_900_000))
        #expect(transaction.signedPayloadBundleID == "com.example")
        #expect(transaction.signedPayloadAppAppleID == nil)
    }

    @Test func signedTransactionWithRevocation() throws {
        let transaction = try decode(JWSTransactionDecodedPayload.self, fixture: "signedTransactionWithRevocation")
        #expect(transaction.revocationType == .refundProrated)
        #expect(transaction.revocationPercentage == 50000)
        #expect(transaction.revocationDate == date(1_698_148_950_000))
    }

    @Test func signedRenewalInfo() throws {
        let info = try decode(JWSRenewalInfoDecodedPayload.self, fixture: "signedRenewalInfo")
        #expect(info.expirationIntent == .customerCancelled)
        #expect(info.autoRenewProductID == "com.example.product.2")
        #expect(info.autoRenewStatus == .on)
        #expect(info.isInBillingRetryPeriod == true)
        #expect(info.priceIncreaseStatus == .customerHasNotResponded)
        #expect(info.gracePeriodExpiresDate == date(1_698_148_900_000))
        #expect(info.offerType == .promotional)
        #expect(info.renewalPriceAmount == Decimal(string: "9.99"))
        #expect(info.eligibleWinBackOfferIDs == ["eligible1", "eligible2"])
        #expect(info.commitmentInfo?.commitmentAutoRenewProductID == "com.example.product.commitment")
        #expect(info.commitmentInfo?.commitmentRenewalBillingPlanType == .monthly)
        #expect(info.renewalBillingPlanType == .monthly)
        #expect(info.signedPayloadEnvironment == .localTesting)
        #expect(info.signedPayloadBundleID == nil)
    }

    @Test func appTransaction() throws {
        let app = try decode(AppTransaction.self, fixture: "appTransaction")
        #expect(app.receiptType == .localTesting)
        #expect(app.appAppleID == 531412)
        #expect(app.versionExternalIdentifier == 512)
        #expect(app.originalPlatform == .iOS)
        #expect(app.appTransactionID == "71134")
        #expect(app.preorderDate == date(1_698_148_700_000))
        #expect(app.signedPayloadDate == date(1_698_148_900_000))
        #expect(app.signedPayloadAppAppleID == 531412)
        #expect(app.signedPayloadEnvironment == .localTesting)
    }

    @Test func notificationWithData() throws {
        let notification = try decode(ResponseBodyV2DecodedPayload.self, fixture: "signedNotification")
        #expect(notification.notificationType == .subscribed)
        #expect(notification.subtype == .initialBuy)
        #expect(notification.data?.status == .active)
        #expect(notification.data?.bundleVersion == "1.2.3")
        #expect(notification.signedPayloadBundleID == "com.example")
        #expect(notification.signedPayloadAppAppleID == 41234)
        #expect(notification.signedPayloadEnvironment == .localTesting)
        #expect(notification.signedPayloadDate == date(1_698_148_900_000))
    }

    @Test func consumptionRequestNotification() throws {
        let notification = try decode(
            ResponseBodyV2DecodedPayload.self, fixture: "signedConsumptionRequestNotification")
        #expect(notification.notificationType == .consumptionRequest)
        #expect(notification.data?.consumptionRequestReason == .unintendedPurchase)
    }

    @Test func summaryNotification() throws {
        let notification = try decode(ResponseBodyV2DecodedPayload.self, fixture: "signedSummaryNotification")
        #expect(notification.notificationType == .renewalExtension)
        #expect(notification.subtype == .summary)
        #expect(notification.summary?.storefrontCountryCodes == ["CAN", "USA", "MEX"])
        #expect(notification.summary?.succeededCount == 5)
        #expect(notification.summary?.failedCount == 2)
        #expect(notification.signedPayloadAppAppleID == 41234)
        #expect(notification.signedPayloadEnvironment == .localTesting)
    }

    @Test(arguments: [
        ("signedExternalPurchaseTokenNotification", AppStoreEnvironment.production),
        ("signedExternalPurchaseTokenSandboxNotification", AppStoreEnvironment.sandbox),
    ])
    func externalPurchaseTokenEnvironmentComesFromTheTokenID(name: String, environment: AppStoreEnvironment) throws {
        let notification = try decode(ResponseBodyV2DecodedPayload.self, fixture: name)
        #expect(notification.notificationType == .externalPurchaseToken)
        #expect(notification.subtype == .unreported)
        #expect(notification.externalPurchaseToken?.tokenCreationDate == date(1_698_148_950_000))
        #expect(notification.signedPayloadEnvironment == environment)
        #expect(notification.signedPayloadBundleID == "com.example")
        #expect(notification.signedPayloadAppAppleID == 55555)
    }

    @Test func rescindConsentNotification() throws {
        let notification = try decode(ResponseBodyV2DecodedPayload.self, fixture: "signedRescindConsentNotification")
        #expect(notification.notificationType == .rescindConsent)
        #expect(notification.appData?.signedAppTransactionInfo == "signed_app_transaction_info_value")
        #expect(notification.signedPayloadAppAppleID == 41234)
        #expect(notification.signedPayloadEnvironment == .localTesting)
    }

    @Test func historyAndStatus() throws {
        let history = try decode(HistoryResponse.self, fixture: "transactionHistoryResponse")
        #expect(history.hasMore == true)
        #expect(history.appAppleID == 323232)
        #expect(history.signedTransactions == ["signed_transaction_value", "signed_transaction_value2"])
        let statuses = try decode(StatusResponse.self, fixture: "getAllSubscriptionStatusesResponse")
        #expect(statuses.data?.count == 2)
        #expect(statuses.data?[0].lastTransactions?[1].status == .revoked)
        #expect(statuses.data?[1].lastTransactions?[0].originalTransactionID == "3413453")
    }

    @Test func otherServerResponses() throws {
        #expect(try decode(OrderLookupResponse.self, fixture: "lookupOrderIdResponse").status == .invalid)
        #expect(
            try decode(RefundHistoryResponse.self, fixture: "getRefundHistoryResponse").revision == "revision_output")
        let extend = try decode(ExtendRenewalDateResponse.self, fixture: "extendSubscriptionRenewalDateResponse")
        #expect(extend.success == true)
        #expect(extend.effectiveDate == date(1_698_148_900_000))
        let mass = try decode(
            MassExtendRenewalDateStatusResponse.self, fixture: "getStatusOfSubscriptionRenewalDateExtensionsResponse")
        #expect(mass.complete == true)
        #expect(mass.succeededCount == 30)
        let test = try decode(CheckTestNotificationResponse.self, fixture: "getTestNotificationStatusResponse")
        #expect(test.sendAttempts?.map(\.sendAttemptResult) == [.noResponse, .success])
        let history = try decode(NotificationHistoryResponse.self, fixture: "getNotificationHistoryResponse")
        #expect(history.paginationToken == "57715481-805a-4283-8499-1c19b5d6b20a")
        #expect(history.notificationHistory?[1].sendAttempts?.first?.sendAttemptResult == .circularRedirect)
    }

    @Test(arguments: [
        ("apiException", 5_000_000, 500, false),
        ("apiTooManyRequestsException", 4_290_000, 429, true),
        ("transactionIdNotFoundError", 4_040_010, 404, false),
        ("invalidTransactionIdError", 4_000_006, 400, false),
        ("appTransactionDoesNotExistError", 4_040_019, 404, false),
        ("familyTransactionNotSupportedError", 4_000_185, 400, false),
        ("invalidAppAccountTokenUUIDError", 4_000_183, 400, false),
        ("transactionIdNotOriginalTransactionId", 4_000_187, 400, false),
    ])
    func errorBodies(name: String, code: Int, httpStatus: Int, retryable: Bool) throws {
        let body = try decode(APIErrorResponse.self, fixture: name)
        let errorCode = try #require(body.errorCode)
        #expect(errorCode.rawValue == code)
        #expect(errorCode.isKnown)
        #expect(errorCode.httpStatus == httpStatus)
        #expect(errorCode.isRetryable == retryable)
        #expect(body.errorMessage?.isEmpty == false)
    }

    @Test func unknownErrorCodeSurvives() throws {
        let body = try decode(APIErrorResponse.self, fixture: "apiUnknownError")
        #expect(body.errorCode?.rawValue == 9_990_000)
        #expect(body.errorCode?.isKnown == false)
        #expect(body.errorCode?.isRetryable == false)
        #expect(body.errorMessage == "Testing error.")
    }
}

@Suite(.enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
struct MalformedFixtureTests {
    /// An unknown environment is a value this version does not know, not an error.
    @Test func malformedEnvironmentSurvivesAsUnknownValue() throws {
        let outcome = try RoundTrip.run(
            HistoryResponse.self, try SharedFixtures.model("transactionHistoryResponseWithMalformedEnvironment"))
        let environment = try #require(outcome.first.environment)
        #expect(environment.rawValue == "LocalTestingxxx")
        #expect(!environment.isKnown)
        #expect(outcome.differences.isEmpty)
    }

    /// A numeric app ID that is not a number is corrupt data: decoding fails rather than silently
    /// dropping the ID, as Apple's own library does. (The fixture also has `"hasMore": 1`, which
    /// fails too; the second check isolates the app ID.)
    @Test func malformedAppAppleIDFailsToDecode() throws {
        let data = try SharedFixtures.model("transactionHistoryResponseWithMalformedAppAppleId")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(HistoryResponse.self, from: data) }

        var object = try #require(try JSONComparison.parse(data).objectValue)
        object["hasMore"] = true
        let onlyAppIDWrong = try JSONEncoder().encode(JSONValue.object(object))
        do {
            _ = try JSONDecoder().decode(HistoryResponse.self, from: onlyAppIDWrong)
            Issue.record("decoding should fail on appAppleId \"hi\"")
        } catch DecodingError.typeMismatch(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["appAppleId"])
        }
    }
}
