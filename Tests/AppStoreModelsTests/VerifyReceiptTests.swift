import AppStoreModels
import Foundation
import Testing

/// A verifyReceipt answer in the shape the service sends: strings for numbers and Booleans, three
/// strings per date, numbers for the receipt's IDs.
let verifyReceiptSample = #"""
    {"status":0,"environment":"Sandbox","latest_receipt":"TUlJVGVzdA==","is-retryable":false,
     "receipt":{"receipt_type":"ProductionSandbox","adam_id":0,"app_item_id":0,"bundle_id":"dev.kakin.demo",
      "application_version":"42","download_id":0,"version_external_identifier":0,
      "receipt_creation_date":"2023-07-27 02:41:06 Etc/GMT","receipt_creation_date_ms":"1690425666000",
      "receipt_creation_date_pst":"2023-07-26 19:41:06 America/Los_Angeles",
      "request_date":"2023-07-27 02:41:10 Etc/GMT","request_date_ms":"1690425670000",
      "request_date_pst":"2023-07-26 19:41:10 America/Los_Angeles",
      "original_purchase_date":"2013-08-01 07:00:00 Etc/GMT","original_purchase_date_ms":"1375340400000",
      "original_purchase_date_pst":"2013-08-01 00:00:00 America/Los_Angeles","original_application_version":"1.0",
      "in_app":[{"quantity":"1","product_id":"dev.kakin.demo.coins","transaction_id":"2000000400000001",
       "original_transaction_id":"2000000400000001","purchase_date":"2023-07-27 02:40:00 Etc/GMT",
       "purchase_date_ms":"1690425600000","purchase_date_pst":"2023-07-26 19:40:00 America/Los_Angeles",
       "original_purchase_date":"2023-07-27 02:40:00 Etc/GMT","original_purchase_date_ms":"1690425600000",
       "original_purchase_date_pst":"2023-07-26 19:40:00 America/Los_Angeles","is_trial_period":"false",
       "in_app_ownership_type":"PURCHASED"}]},
     "latest_receipt_info":[{"quantity":"1","product_id":"dev.kakin.demo.monthly","transaction_id":"2000000400000002",
       "original_transaction_id":"2000000400000002","web_order_line_item_id":"2000000030000001",
       "purchase_date":"2023-07-27 02:41:00 Etc/GMT","purchase_date_ms":"1690425660000",
       "purchase_date_pst":"2023-07-26 19:41:00 America/Los_Angeles",
       "expires_date":"2023-07-27 02:46:00 Etc/GMT","expires_date_ms":"1690425960000",
       "expires_date_pst":"2023-07-26 19:46:00 America/Los_Angeles",
       "cancellation_date":"2023-07-27 02:43:00 Etc/GMT","cancellation_date_ms":"1690425780000",
       "cancellation_date_pst":"2023-07-26 19:43:00 America/Los_Angeles","cancellation_reason":"1",
       "is_trial_period":"true","is_in_intro_offer_period":"false","is_upgraded":"true",
       "promotional_offer_id":"promo","offer_code_ref_name":"CODE","subscription_group_identifier":"21000001",
       "in_app_ownership_type":"FAMILY_SHARED","app_account_token":"0c5a1f38-2a5b-4b53-9a07-4a3f3a6d0c11"}],
     "pending_renewal_info":[{"auto_renew_product_id":"dev.kakin.demo.monthly","auto_renew_status":"0",
       "expiration_intent":"1","is_in_billing_retry_period":"0","original_transaction_id":"2000000400000002",
       "product_id":"dev.kakin.demo.monthly","price_consent_status":"1","price_increase_status":"1",
       "offer_code_ref_name":"CODE","promotional_offer_id":"promo",
       "grace_period_expires_date":"2023-07-27 02:50:00 Etc/GMT","grace_period_expires_date_ms":"1690426200000",
       "grace_period_expires_date_pst":"2023-07-26 19:50:00 America/Los_Angeles"}]}
    """#

let verifyReceiptSamples: [RoundTripCase] = [
    .of(VerifyReceiptResponse.self, verifyReceiptSample),
    .of(VerifyReceiptRequest.self, #"{"receipt-data":"TUlJ","password":"secret","exclude-old-transactions":true}"#),
    .of(
        VerifyReceiptReceipt.self,
        #"""
        {"receipt_type":"ProductionVPP","adam_id":6400000001,"bundle_id":"b","preorder_date":"2020-01-01 00:00:00 Etc/GMT",
         "preorder_date_ms":"1577836800000","preorder_date_pst":"2019-12-31 16:00:00 America/Los_Angeles",
         "expiration_date":"2030-01-01 00:00:00 Etc/GMT","expiration_date_ms":"1893456000000",
         "expiration_date_pst":"2029-12-31 16:00:00 America/Los_Angeles","in_app":[]}
        """#),
    .of(VerifyReceiptInAppPurchase.self, #"{"quantity":"3","product_id":"p","is_in_intro_offer_period":"true"}"#),
    .of(PendingRenewalInfo.self, #"{"auto_renew_status":"1","expiration_intent":"5"}"#),
]

@Suite struct VerifyReceiptTests {
    @Test(arguments: verifyReceiptSamples)
    func sampleRoundTrips(_ sample: RoundTripCase) throws {
        let result = try sample.check()
        #expect(result.equal)
        #expect(result.differences.isEmpty, "\(result.differences.joined(separator: "; "))")
    }

    @Test func typedAccessorsReadAppleStrings() throws {
        let response = try JSONDecoder().decode(VerifyReceiptResponse.self, from: Data(verifyReceiptSample.utf8))
        #expect(response.status == .valid)
        #expect(response.isRetryable == false)
        let receipt = try #require(response.receipt)
        #expect(receipt.receiptType == .productionSandbox)
        #expect(receipt.receiptType?.environment == .sandbox)
        #expect(receipt.adamID == 0)
        #expect(receipt.receiptCreationDate == Date(epochMilliseconds: 1_690_425_666_000))
        #expect(receipt.inApp?.first?.quantityValue == 1)
        #expect(receipt.inApp?.first?.isTrialPeriodValue == false)
        let latest = try #require(response.latestReceiptInfo?.first)
        #expect(latest.purchaseDate == Date(epochMilliseconds: 1_690_425_660_000))
        #expect(latest.expiresDate == Date(epochMilliseconds: 1_690_425_960_000))
        #expect(latest.cancellationDate == Date(epochMilliseconds: 1_690_425_780_000))
        #expect(latest.cancellationReasonValue == .appIssue)
        #expect(latest.isTrialPeriodValue == true)
        #expect(latest.isInIntroOfferPeriodValue == false)
        #expect(latest.isUpgradedValue == true)
        #expect(latest.inAppOwnershipType == .familyShared)
        let renewal = try #require(response.pendingRenewalInfo?.first)
        #expect(renewal.autoRenewStatusValue == .off)
        #expect(renewal.expirationIntentValue == .customerCancelled)
        #expect(renewal.isInBillingRetryPeriodValue == false)
        #expect(renewal.priceConsentStatusValue == true)
        #expect(renewal.priceIncreaseStatusValue == .customerConsentedOrWasNotified)
        #expect(renewal.gracePeriodExpiresDate == Date(epochMilliseconds: 1_690_426_200_000))
    }

    @Test func dateTripleMatchesAppleSpelling() {
        let triple = VerifyReceiptDate.strings(for: Date(epochMilliseconds: 1_690_425_666_000))
        #expect(triple.gmt == "2023-07-27 02:41:06 Etc/GMT")
        #expect(triple.milliseconds == "1690425666000")
        #expect(triple.pacific == "2023-07-26 19:41:06 America/Los_Angeles")
        #expect(triple.date == Date(epochMilliseconds: 1_690_425_666_000))
    }

    @Test func dateTripleUsesStandardTimeInWinterAndKeepsMilliseconds() {
        let triple = VerifyReceiptDate(Date(epochMilliseconds: 1_704_067_200_789))
        #expect(triple.gmt == "2024-01-01 00:00:00 Etc/GMT")
        #expect(triple.milliseconds == "1704067200789")
        #expect(triple.pacific == "2023-12-31 16:00:00 America/Los_Angeles")
    }

    @Test func dateFallsBackToTheGMTSpelling() {
        #expect(
            VerifyReceiptDate.date(milliseconds: nil, gmt: "2023-07-27 02:41:06 Etc/GMT")
                == Date(epochMilliseconds: 1_690_425_666_000))
        #expect(VerifyReceiptDate.date(milliseconds: "x", gmt: "garbage") == nil)
    }

    @Test func emptyDateStringsMeanNoDate() throws {
        #expect(VerifyReceiptDate.date(milliseconds: "", gmt: "") == nil)
        #expect(VerifyReceiptDate(gmt: "", milliseconds: "", pacific: "").date == nil)
        let purchase = try JSONDecoder().decode(
            VerifyReceiptInAppPurchase.self,
            from: Data(
                #"""
                {"product_id":"p","transaction_id":"1","purchase_date":"2023-07-27 02:41:06 Etc/GMT",
                 "purchase_date_ms":"1690425666000","expires_date":"","expires_date_ms":"","expires_date_pst":""}
                """#.utf8))
        #expect(purchase.purchaseDate == Date(epochMilliseconds: 1_690_425_666_000))
        #expect(purchase.expiresDate == nil)
    }

    @Test(arguments: [
        "2023-13-27 02:41:06 Etc/GMT", "2023-02-30 02:41:06 Etc/GMT", "2023-07-27 25:41:06 Etc/GMT",
        "2023-07-27  02:41:06 Etc/GMT", "2023-07-27 02:41:06 America/Los_Angeles", "2023-07-27 02:41:06",
    ])
    func malformedGMTSpellingsAreNoDate(text: String) {
        #expect(VerifyReceiptDate.date(milliseconds: nil, gmt: text) == nil)
    }

    @Test func settingATypedDateFillsTheTriple() {
        var purchase = VerifyReceiptInAppPurchase(productID: "p")
        purchase.purchaseDate = Date(epochMilliseconds: 1_690_425_666_000)
        #expect(purchase.purchaseDateGMT == "2023-07-27 02:41:06 Etc/GMT")
        #expect(purchase.purchaseDateMS == "1690425666000")
        #expect(purchase.purchaseDatePST == "2023-07-26 19:41:06 America/Los_Angeles")
        purchase.purchaseDate = nil
        #expect(purchase.purchaseDateGMT == nil && purchase.purchaseDateMS == nil && purchase.purchaseDatePST == nil)
    }

    @Test(arguments: ["1", "true", "\"1\"", "\"true\""])
    func isRetryableAcceptsEverySpellingOfTrue(_ spelling: String) throws {
        let json = #"{"status":21100,"is-retryable":\#(spelling)}"#
        let response = try JSONDecoder().decode(VerifyReceiptResponse.self, from: Data(json.utf8))
        #expect(response.isRetryable == true)
        #expect(response.status?.isRetryable == true)
    }

    @Test func isRetryableZeroIsFalseAndMissingIsNil() throws {
        let zero = try JSONDecoder().decode(VerifyReceiptResponse.self, from: Data(#"{"is-retryable":0}"#.utf8))
        #expect(zero.isRetryable == false)
        let missing = try JSONDecoder().decode(VerifyReceiptResponse.self, from: Data(#"{"status":0}"#.utf8))
        #expect(missing.isRetryable == nil)
        #expect(try JSONComparison.parse(try JSONEncoder().encode(missing)) == ["status": 0])
    }

    @Test func receiptIDsAcceptStringsOfDigits() throws {
        let receipt = try JSONDecoder().decode(
            VerifyReceiptReceipt.self, from: Data(#"{"adam_id":"123","app_item_id":456}"#.utf8))
        #expect(receipt.adamID == 123)
        #expect(receipt.appItemID == 456)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(VerifyReceiptReceipt.self, from: Data(#"{"adam_id":"abc"}"#.utf8))
        }
    }
}

@Suite struct VerifyReceiptStatusTests {
    static let documented = [0] + Array(21000...21010)

    @Test(arguments: documented)
    func everyDocumentedStatusHasItsOwnMessage(_ code: Int) {
        let status = VerifyReceiptStatus(rawValue: code)
        #expect(status.isKnown)
        #expect(!status.message.isEmpty)
        #expect(!status.message.contains("does not know"))
    }

    @Test func messagesAreDistinct() {
        let messages = Self.documented.map { VerifyReceiptStatus(rawValue: $0).message }
        #expect(Set(messages).count == messages.count)
    }

    @Test func retryRules() {
        let retryable = Self.documented.filter { VerifyReceiptStatus(rawValue: $0).isRetryable }
        #expect(retryable == [21005, 21009])
        #expect((21100...21199).allSatisfy { VerifyReceiptStatus(rawValue: $0).isRetryable })
        #expect(VerifyReceiptStatus(rawValue: 21150).isKnown)
        #expect(!VerifyReceiptStatus(rawValue: 21200).isKnown)
        #expect(!VerifyReceiptStatus(rawValue: 21200).isRetryable)
        #expect(VerifyReceiptStatus.sandboxReceiptSentToProduction.environmentToRetry == .sandbox)
        #expect(VerifyReceiptStatus.productionReceiptSentToSandbox.environmentToRetry == .production)
        let otherEnvironment = Self.documented.filter {
            VerifyReceiptStatus(rawValue: $0).shouldRetryInOtherEnvironment
        }
        #expect(otherEnvironment == [21007, 21008])
        #expect(VerifyReceiptStatus.sandboxReceiptSentToProduction.message.contains("sandbox endpoint"))
    }
}
