import AppStoreModels
import Foundation
import Testing

/// Request and answer bodies of the Retention Messaging API, shaped as Apple's documentation shows
/// them (the answers Apple sends are also covered by Apple's own fixtures in
/// `AppleFixtureRoundTripTests`).
let retentionMessagingSamples: [RoundTripCase] = [
    .of(
        UploadMessageRequestBody.self,
        #"""
        {"header":"Before you go","body":"Keep your streak: three months at half price.",
         "image":{"imageIdentifier":"6f1c2a9e-0b7d-4c4e-9a55-2f3e1d0c9b8a","altText":"A flame"},
         "headerPosition":"ABOVE_IMAGE",
         "bulletPoints":[{"text":"Offline lessons","imageIdentifier":"0d3c8a51-57f4-4a8e-8f4e-2b6a1c9d7e30",
                          "altText":"A cloud"}]}
        """#),
    .of(UploadMessageRequestBody.self, #"{"header":"Stay","body":"Your plan keeps every feature."}"#),
    .of(DefaultConfigurationRequest.self, #"{"messageIdentifier":"a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890"}"#),
    .of(RealtimeURLRequest.self, #"{"realtimeURL":"https://iap.example.com/v1/apple/retention"}"#),
    .of(PerformanceTestRequest.self, #"{"originalTransactionId":"2000000123456789"}"#),
    .of(RealtimeRequestBody.self, #"{"signedPayload":"h.p.s"}"#),
    .of(RealtimeResponseBody.self, #"{"message":{"messageIdentifier":"a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890"}}"#),
    .of(
        RealtimeResponseBody.self,
        #"""
        {"alternateProduct":{"messageIdentifier":"a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890",
                             "productId":"com.example.kakin.premium.yearly"}}
        """#),
    .of(
        RealtimeResponseBody.self,
        #"{"promotionalOffer":{"messageIdentifier":"a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890","promotionalOfferSignatureV2":"h.p.s"}}"#
    ),
    .of(
        RealtimeResponseBody.self,
        #"""
        {"promotionalOffer":{"messageIdentifier":"a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890",
          "promotionalOfferSignatureV1":{"encodedSignature":"MEUCIQ==","productId":"com.example.kakin.premium.monthly",
            "nonce":"5e7c3f8a-1b2d-4c6e-8f90-a1b2c3d4e5f6","timestamp":1790000000000,"keyId":"OFFERKEY01",
            "offerIdentifier":"comeback","appAccountToken":"0c5a1f38-2a5b-4b53-9a07-4a3f3a6d0c11"}}}
        """#),
    .of(
        RealtimeResponseBody.self,
        #"{"advancedCommerceInfo":{"messageIdentifier":"a1b2c3d4-e5f6-7890-a1b2-c3d4e5f67890","advancedCommerceData":"d"}}"#
    ),
    .of(APIErrorResponse.self, #"{"errorCode":4090001,"errorMessage":"Message already exists."}"#),
]

@Suite struct RetentionMessagingRoundTripTests {
    @Test(arguments: retentionMessagingSamples)
    func sampleRoundTrips(_ sample: RoundTripCase) throws {
        let result = try sample.check()
        #expect(result.equal)
        #expect(result.differences.isEmpty, "\(result.differences.joined(separator: "; "))")
    }

    @Test func statesAndSizesApplesLaterVersionsAddStillDecode() throws {
        let item = try JSONDecoder().decode(
            GetImageListResponseItem.self,
            from: Data(#"{"imageIdentifier":"i","imageState":"ARCHIVED","imageSize":"THUMBNAIL"}"#.utf8))
        #expect(item.imageState?.rawValue == "ARCHIVED")
        #expect(item.imageState?.isKnown == false)
        #expect(item.imageSize == RetentionImageSize("THUMBNAIL"))
        #expect(PerformanceTestStatus("PASS") == .pass)
    }

    @Test func theAnswerSaysWhichMessageItShows() {
        #expect(RealtimeResponseBody.message("m").chosenMessageIdentifier == "m")
        #expect(RealtimeResponseBody.message("m").choiceCount == 1)
        let two = RealtimeResponseBody(
            message: .init(messageIdentifier: "m"), alternateProduct: .init(messageIdentifier: "n", productID: "p"))
        #expect(two.choiceCount == 2)
        #expect(RealtimeResponseBody().chosenMessageIdentifier == nil)
    }

    @Test func retentionErrorCodesCarryTheirHTTPStatus() {
        #expect(APIErrorCode.messageAlreadyExists.httpStatus == 409)
        #expect(APIErrorCode.realtimeURLNotFound.httpStatus == 404)
        #expect(APIErrorCode.noPassingPerformanceTest.httpStatus == 403)
        #expect(APIErrorCode.headerTooLong.httpStatus == 400)
        #expect(APIErrorCode.imageInUse.isKnown)
        #expect(RetentionMessaging.realtimeResponseLimit == .milliseconds(700))
    }

    @Test func retentionEndpointsHaveApplesLimits() {
        #expect(ServerAPIEndpoint.configureDefaultMessage.productionRequestsPerSecond == 10)
        #expect(ServerAPIEndpoint.uploadMessage.requestsPerHour(in: .sandbox) == 360)
        #expect(ServerAPIEndpoint.initiatePerformanceTest.requestsPerHour(in: .production) == 3600)
    }
}
