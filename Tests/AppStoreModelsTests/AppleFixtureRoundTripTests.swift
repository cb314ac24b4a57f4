import AppStoreModels
import Foundation
import KakinTestSupport
import Testing

/// One of Apple's model fixtures and the type that models it.
struct ModelFixture: Sendable, CustomTestStringConvertible {
    let name: String
    let check: @Sendable (Data) throws -> (equal: Bool, differences: [String])

    var testDescription: String { name }

    static func of<Model: Codable & Equatable & Sendable>(_ name: String, _ type: Model.Type) -> ModelFixture {
        ModelFixture(name: name) { data in
            let outcome = try RoundTrip.run(Model.self, data)
            return (outcome.first == outcome.second, outcome.differences)
        }
    }
}

/// Every fixture in `models/` that belongs to a type of this module.
let modelFixtures: [ModelFixture] = [
    .of("signedTransaction", JWSTransactionDecodedPayload.self),
    .of("signedTransactionWithRevocation", JWSTransactionDecodedPayload.self),
    .of("signedRenewalInfo", JWSRenewalInfoDecodedPayload.self),
    .of("appTransaction", AppTransaction.self),
    .of("appData", AppData.self),
    .of("signedNotification", ResponseBodyV2DecodedPayload.self),
    .of("signedSummaryNotification", ResponseBodyV2DecodedPayload.self),
    .of("signedConsumptionRequestNotification", ResponseBodyV2DecodedPayload.self),
    .of("signedExternalPurchaseTokenNotification", ResponseBodyV2DecodedPayload.self),
    .of("signedExternalPurchaseTokenSandboxNotification", ResponseBodyV2DecodedPayload.self),
    .of("signedRescindConsentNotification", ResponseBodyV2DecodedPayload.self),
    .of("transactionHistoryResponse", HistoryResponse.self),
    .of("transactionHistoryResponseWithMalformedEnvironment", HistoryResponse.self),
    .of("getAllSubscriptionStatusesResponse", StatusResponse.self),
    .of("lookupOrderIdResponse", OrderLookupResponse.self),
    .of("getRefundHistoryResponse", RefundHistoryResponse.self),
    .of("extendSubscriptionRenewalDateResponse", ExtendRenewalDateResponse.self),
    .of("extendRenewalDateForAllActiveSubscribersResponse", MassExtendRenewalDateResponse.self),
    .of("getStatusOfSubscriptionRenewalDateExtensionsResponse", MassExtendRenewalDateStatusResponse.self),
    .of("requestTestNotificationResponse", SendTestNotificationResponse.self),
    .of("getTestNotificationStatusResponse", CheckTestNotificationResponse.self),
    .of("getNotificationHistoryResponse", NotificationHistoryResponse.self),
    .of("transactionInfoResponse", TransactionInfoResponse.self),
    .of("appTransactionInfoResponse", AppTransactionInfoResponse.self),
    .of("apiException", APIErrorResponse.self),
    .of("apiTooManyRequestsException", APIErrorResponse.self),
    .of("apiUnknownError", APIErrorResponse.self),
    .of("appTransactionDoesNotExistError", APIErrorResponse.self),
    .of("familyTransactionNotSupportedError", APIErrorResponse.self),
    .of("invalidAppAccountTokenUUIDError", APIErrorResponse.self),
    .of("invalidTransactionIdError", APIErrorResponse.self),
    .of("transactionIdNotFoundError", APIErrorResponse.self),
    .of("transactionIdNotOriginalTransactionId", APIErrorResponse.self),
    .of("decodedRealtimeRequest", DecodedRealtimeRequestBody.self),
    .of("getDefaultMessageResponse", DefaultConfigurationResponse.self),
    .of("getImageListResponse", GetImageListResponse.self),
    .of("getMessageListResponse", GetMessageListResponse.self),
    .of("getRealtimeUrlResponse", RealtimeURLResponse.self),
    .of("performanceTestResponse", PerformanceTestResponse.self),
    .of("performanceTestResultResponse", PerformanceTestResultResponse.self),
]

/// Fixtures this module deliberately does not model, and why.
let fixturesOutOfScope: [String: String] = [
    "transactionHistoryResponseWithMalformedAppAppleId": "must fail to decode; see MalformedFixtureTests"
]

@Suite(.enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
struct AppleFixtureRoundTripTests {
    @Test(arguments: modelFixtures)
    func fixtureRoundTripsWithoutLosingKeys(_ fixture: ModelFixture) throws {
        let result = try fixture.check(try SharedFixtures.model(fixture.name))
        #expect(result.equal, "decode → encode → decode changed the value")
        #expect(
            result.differences.isEmpty,
            "re-encoded JSON differs from \(fixture.name).json: \(result.differences.joined(separator: "; "))")
    }

    @Test func everyFixtureIsCoveredOrExplained() throws {
        let covered = Set(modelFixtures.map(\.name))
        let explained = Set(fixturesOutOfScope.keys)
        let unaccounted = try SharedFixtures.modelNames().filter {
            !$0.hasPrefix("advancedCommerce") && !covered.contains($0) && !explained.contains($0)
        }
        #expect(unaccounted.isEmpty, "fixtures with no test: \(unaccounted.sorted())")
    }
}
