import AppStoreModels
import Foundation
import Testing

private func sampleData() throws -> Data {
    let url = try #require(
        Bundle.module.url(forResource: "Sample", withExtension: "storekit", subdirectory: "Resources"))
    return try Data(contentsOf: url)
}

let storeKitSamples: [RoundTripCase] = [
    .of(
        StoreKitConfiguration.Product.self,
        #"""
        {"displayPrice":"2.99","familyShareable":false,"internalID":"1","productID":"p","referenceName":"P",
         "type":"Consumable","localizations":[{"description":"d","displayName":"n","locale":"fr_FR"}]}
        """#),
    .of(StoreKitConfiguration.Localization.self, #"{"description":"d","displayName":"n","locale":"en_GB"}"#),
    .of(StoreKitConfiguration.SubscriptionGroup.self, #"{"id":"g","localizations":[],"name":"G","subscriptions":[]}"#),
    .of(
        StoreKitConfiguration.Subscription.self,
        #"""
        {"adHocOffers":[],"codeOffers":[],"displayPrice":"4.99","familyShareable":false,"groupNumber":1,
         "internalID":"s","introductoryOffer":{"internalID":"i","paymentMode":"payAsYouGo","subscriptionPeriod":"P1M",
         "numberOfPeriods":3,"displayPrice":"1.99"},"localizations":[],"productID":"p","recurringSubscriptionPeriod":"P1M",
         "referenceName":"S","subscriptionGroupID":"g","type":"RecurringSubscription","winbackOffers":[]}
        """#),
    .of(
        StoreKitConfiguration.IntroductoryOffer.self,
        #"{"internalID":"i","paymentMode":"free","subscriptionPeriod":"P3D"}"#),
    .of(
        StoreKitConfiguration.AdHocOffer.self,
        #"""
        {"internalID":"a","offerID":"o","paymentMode":"payUpFront","referenceName":"R","subscriptionPeriod":"P6M",
         "displayPrice":"9.99","numberOfPeriods":1}
        """#),
    .of(
        StoreKitConfiguration.SubscriptionOffer.self,
        #"{"offerID":"w","paymentMode":"free","subscriptionPeriod":"P1M","priority":5,"eligibility":{"months":3}}"#),
    .of(
        StoreKitConfiguration.Settings.self,
        #"{"_locale":"de_DE","_storefront":"DEU","_timeRate":3,"_compatibilityTimeRate":{"3":6},"_newFlag":true}"#),
    .of(
        StoreKitConfiguration.StoreKitErrorSetting.self,
        #"{"current":{"index":1},"enabled":true,"name":"Verification"}"#),
    .of(StoreKitConfiguration.Version.self, #"{"major":3,"minor":0}"#),
    .of(StoreKitConfiguration.AppPolicies.self, #"{"eula":"Be nice.","policies":[]}"#),
    .of(StoreKitConfiguration.Policy.self, #"{"locale":"en_US","policyText":"t","policyURL":"https://x.example"}"#),
    .of(StoreKitConfiguration.SubscriptionOffersKeyPair.self, #"{"id":"k","privateKey":"AAAA"}"#),
]

@Suite struct StoreKitConfigurationTests {
    @Test(arguments: storeKitSamples)
    func sampleRoundTrips(_ sample: RoundTripCase) throws {
        let result = try sample.check()
        #expect(result.equal)
        #expect(result.differences.isEmpty, "\(result.differences.joined(separator: "; "))")
    }

    @Test func sampleFileDecodes() throws {
        let configuration = try StoreKitConfiguration.load(from: try sampleData())
        #expect(configuration.identifier == "5B7C31E2")
        #expect(configuration.version == StoreKitConfiguration.Version(major: 4, minor: 0))
        #expect(configuration.products?.map(\.type) == [.consumable, .nonConsumable])
        #expect(configuration.products?[1].displayPriceValue == Decimal(string: "199.99"))
        #expect(configuration.products?[0].localizations?[1].displayName == "コイン100枚")
        #expect(configuration.nonRenewingSubscriptions?.first?.type == .nonRenewingSubscription)
        #expect(
            configuration.allProductIDs == [
                "dev.kakin.demo.coins100", "dev.kakin.demo.pro", "dev.kakin.demo.season",
                "dev.kakin.demo.plus.monthly", "dev.kakin.demo.plus.yearly",
            ])

        let group = try #require(configuration.subscriptionGroups?.first)
        let monthly = try #require(group.subscriptions?.first)
        #expect(monthly.groupNumber == 2)
        #expect(monthly.recurringSubscriptionPeriodValue == .oneMonth)
        #expect(monthly.introductoryOffer?.paymentMode == .free)
        #expect(monthly.introductoryOffer?.subscriptionPeriodValue == .oneWeek)
        let code = try #require(monthly.codeOffers?.first)
        #expect(code.paymentMode == .payAsYouGo)
        #expect(code.numberOfPeriods == 2)
        #expect(code.otherFields["eligibility"] == ["new", "expired"])

        let yearly = try #require(group.subscriptions?.last)
        #expect(yearly.introductoryOffer == nil)
        let promo = try #require(yearly.adHocOffers?.first)
        #expect(promo.offerID == "plus.yearly.comeback")
        #expect(promo.paymentMode == .payUpFront)
        #expect(promo.displayPriceValue == Decimal(string: "7.99"))
        #expect(promo.subscriptionPeriodValue == SubscriptionPeriod(value: 1, unit: .year))
    }

    @Test func sampleSettingsKeepUnknownKeys() throws {
        let settings = try #require(try StoreKitConfiguration.load(from: try sampleData()).settings)
        #expect(settings.storefront == "USA")
        #expect(settings.locale == "en_US")
        #expect(settings.billingGracePeriodEnabled == true)
        #expect(settings.timeRate == 0)
        #expect(settings.lastSynchronizedDateValue == Date(timeIntervalSinceReferenceDate: 722_390_400.25))
        #expect(settings.storeKitErrors?.map(\.name) == [.loadProducts, .purchase])
        #expect(settings.storeKitErrors?[1].current == ["index": 3])
        #expect(settings.otherSettings == ["_someFutureSetting": ["level": 2, "on": true]])
    }

    @Test func sampleFileRoundTrips() throws {
        let data = try sampleData()
        let configuration = try StoreKitConfiguration.load(from: data)
        let encoded = try configuration.encodedJSON()
        #expect(try StoreKitConfiguration.load(from: encoded) == configuration)
        // The only change allowed: members Xcode writes as `null` decode as absent and are left out.
        let differences = JSONComparison.differences(
            expected: try JSONComparison.parse(data), actual: try JSONComparison.parse(encoded))
        #expect(
            differences == [
                "dropped $.settings._storeKitErrors[0].current",
                "dropped $.subscriptionGroups[0].subscriptions[1].introductoryOffer",
            ])
    }

    @Test func unknownProductTypeAndPaymentModeSurvive() throws {
        let json = #"{"products":[{"type":"Bundle","productID":"x"}],"futureTopLevel":1}"#
        let configuration = try StoreKitConfiguration.load(from: Data(json.utf8))
        #expect(configuration.products?.first?.type?.rawValue == "Bundle")
        #expect(configuration.products?.first?.type?.isKnown == false)
    }

    @Test(arguments: ["", "1,99", "abc", "1.2.3", "-1"])
    func oddPricesHaveNoDecimalValue(_ price: String) {
        #expect(StoreKitConfiguration.Product(displayPrice: price).displayPriceValue == nil)
    }
}
