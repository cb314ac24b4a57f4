import AppStoreModels
import Foundation
import Testing

private struct Stamp: Codable, Equatable {
    @EpochMilliseconds var at: Date?

    enum CodingKeys: String, CodingKey { case at }
}

@Suite struct EpochMillisecondsTests {
    @Test func fractionalMillisecondsDecode() throws {
        let stamp = try JSONDecoder().decode(Stamp.self, from: Data(#"{"at":1697679936049.7297}"#.utf8))
        let date = try #require(stamp.at)
        #expect(abs(date.timeIntervalSince1970 - 1_697_679_936.0497297) < 0.000_001)
    }

    @Test func negativeMillisecondsDecode() throws {
        let stamp = try JSONDecoder().decode(Stamp.self, from: Data(#"{"at":-62135769600000}"#.utf8))
        #expect(stamp.at == Date(epochMilliseconds: -62_135_769_600_000))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        #expect(calendar.component(.year, from: try #require(stamp.at)) == 1)
        #expect(try JSONComparison.parse(try JSONEncoder().encode(stamp)) == ["at": -62_135_769_600_000])
    }

    @Test func missingAndNullDecodeAsNilAndNilIsOmitted() throws {
        #expect(try JSONDecoder().decode(Stamp.self, from: Data("{}".utf8)).at == nil)
        #expect(try JSONDecoder().decode(Stamp.self, from: Data(#"{"at":null}"#.utf8)).at == nil)
        #expect(try JSONEncoder().encode(Stamp(at: nil)) == Data("{}".utf8))
    }
}

@Suite struct JSONValueTests {
    @Test func keepsIntegersApartFromFractions() throws {
        let value = try JSONComparison.parse(Data(#"{"a":1698148900000,"b":0.15,"c":[true,null,"x"],"d":{}}"#.utf8))
        #expect(value == ["a": 1_698_148_900_000, "b": 0.15, "c": [true, nil, "x"], "d": [:]])
        #expect(value["a"]?.integerValue == 1_698_148_900_000)
        #expect(value["b"]?.doubleValue == 0.15)
        #expect(value["c"]?.arrayValue?.first?.boolValue == true)
        let reencoded = try JSONComparison.parse(try JSONEncoder().encode(value))
        #expect(reencoded == value)
    }

    @Test func comparisonNamesDroppedAddedAndChangedKeys() {
        let differences = JSONComparison.differences(
            expected: ["a": 1, "b": ["c": "x"], "d": [1, 2]], actual: ["b": ["c": "y"], "d": [1, 2], "e": false])
        #expect(differences == ["dropped $.a", "changed $.b.c: string(\"x\") → string(\"y\")", "added $.e"])
    }
}

@Suite struct SubscriptionPeriodTests {
    @Test(arguments: [
        ("P1D", 1, SubscriptionPeriod.Unit.day), ("P3D", 3, .day), ("P2W", 2, .week), ("P1M", 1, .month),
        ("P6M", 6, .month), ("P1Y", 1, .year), ("P12M", 12, .month),
    ])
    func parsesAndFormats(text: String, value: Int, unit: SubscriptionPeriod.Unit) throws {
        let period = try #require(SubscriptionPeriod(iso8601: text))
        #expect(period.value == value)
        #expect(period.unit == unit)
        #expect(period.iso8601 == text)
        #expect(period.description == text)
    }

    @Test(arguments: ["", "P", "PM", "1M", "P0M", "P-1M", "P1Y2M", "P1H", "p1m", "P１M", "PT1H"])
    func rejectsWhatAppleDoesNotWrite(_ text: String) {
        #expect(SubscriptionPeriod(iso8601: text) == nil)
    }
}

/// Every WireEnum type of the module, so that each one's known values can be checked.
private let wireEnumChecks: [(name: String, check: @Sendable () throws -> [String])] = [
    check(ProductType.self), check(InAppOwnershipType.self), check(TransactionReason.self), check(OfferType.self),
    check(OfferDiscountType.self), check(RevocationReason.self), check(RevocationType.self),
    check(ExpirationIntent.self), check(AutoRenewStatus.self), check(PriceIncreaseStatus.self), check(Platform.self),
    check(BillingPlanType.self), check(RenewalBillingPlanType.self), check(NotificationTypeV2.self),
    check(NotificationSubtype.self),
    check(ConsumptionRequestReason.self), check(SubscriptionStatus.self), check(SendAttemptResult.self),
    check(OrderLookupStatus.self), check(ExtendReasonCode.self), check(APIErrorCode.self),
    check(TransactionHistoryRequest.ProductType.self), check(TransactionHistoryRequest.Order.self),
    check(ConsumptionRequest.DeliveryStatus.self), check(ConsumptionRequest.RefundPreference.self),
    check(ConsumptionRequestV1.ConsumptionStatus.self), check(ConsumptionRequestV1.Platform.self),
    check(ConsumptionRequestV1.DeliveryStatus.self), check(ConsumptionRequestV1.AccountTenure.self),
    check(ConsumptionRequestV1.PlayTime.self), check(ConsumptionRequestV1.LifetimeDollars.self),
    check(ConsumptionRequestV1.UserStatus.self), check(ConsumptionRequestV1.RefundPreference.self),
    check(VerifyReceiptStatus.self), check(VerifyReceiptReceipt.ReceiptType.self),
    check(StoreKitConfiguration.ProductType.self), check(StoreKitConfiguration.PaymentMode.self),
    check(StoreKitConfiguration.StoreKitErrorSetting.Name.self), check(AppStoreEnvironment.self),
]

/// Problems with a WireEnum type's known values: duplicates, or values that do not round-trip.
private func check<Value: WireEnum>(_ type: Value.Type) -> (name: String, check: @Sendable () throws -> [String]) {
    (
        String(reflecting: type),
        {
            var problems: [String] = []
            if Set(Value.knownValues).count != Value.knownValues.count { problems.append("duplicate known values") }
            if Value.knownValues.isEmpty { problems.append("no known values") }
            let decoded = try JSONDecoder().decode([Value].self, from: try JSONEncoder().encode(Value.knownValues))
            if decoded != Value.knownValues { problems.append("known values do not round-trip") }
            return problems
        }
    )
}

@Suite struct WireEnumCatalogTests {
    @Test func everyWireEnumHasDistinctRoundTrippingKnownValues() throws {
        for (name, check) in wireEnumChecks {
            let problems = try check()
            #expect(problems.isEmpty, "\(name): \(problems)")
        }
    }

    @Test func notificationTypesCoverTheDigest() {
        #expect(NotificationTypeV2.knownValues.count == 23)
        #expect(NotificationSubtype.knownValues.count == 17)
        #expect(NotificationTypeV2("FUTURE_TYPE").isKnown == false)
    }

    @Test func unknownNotificationTypeRoundTrips() throws {
        let data = Data(#"["FUTURE_TYPE","TEST"]"#.utf8)
        let values = try JSONDecoder().decode([NotificationTypeV2].self, from: data)
        #expect(values == [NotificationTypeV2("FUTURE_TYPE"), .test])
        #expect(try JSONEncoder().encode(values) == data)
    }
}
