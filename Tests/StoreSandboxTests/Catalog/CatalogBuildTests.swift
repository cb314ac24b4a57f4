import AppStoreModels
import Foundation
import StoreSandbox
import Testing

@Suite struct CatalogBuildTests {
    @Test func mergesSeveralConfigurations() throws {
        let first = CatalogFixtures.configuration(identifier: "ONE", products: [("a.one", "0.99")])
        let second = CatalogFixtures.configuration(identifier: "TWO", storefront: "JPN", products: [("a.two", "200")])
        let catalog = try SandboxCatalog(configurations: [first, second, try CatalogFixtures.exampleConfiguration()])
        #expect(catalog.productIDs.prefix(2) == ["a.one", "a.two"])
        #expect(catalog.products.count == 2 + CatalogFixtures.exampleProductIDs.count)
        #expect(catalog.product(id: "a.two")?.configurationIdentifier == "TWO")
        #expect(catalog.product(id: "a.two")?.currencyCode == "JPY")
        #expect(catalog.product(id: "nothing") == nil)
    }

    @Test func duplicateProductAcrossConfigurationsIsRejected() throws {
        let first = CatalogFixtures.configuration(identifier: "ONE", products: [("com.example.kakin.removeAd", "0.99")])
        let example = try CatalogFixtures.exampleConfiguration()
        #expect(throws: SandboxError(.duplicateProduct)) { try SandboxCatalog(configurations: [example, first]) }
        do {
            _ = try SandboxCatalog(configurations: [example, first])
            Issue.record("The duplicate was accepted.")
        } catch {
            #expect(error.message.contains("com.example.kakin.removeAd"))
        }
    }

    @Test func duplicateProductInOneConfigurationIsRejected() {
        let configuration = CatalogFixtures.configuration(products: [("a.one", "0.99"), ("a.one", "1.99")])
        #expect(throws: SandboxError(.duplicateProduct)) { try SandboxCatalog(configuration: configuration) }
    }

    @Test func duplicateSubscriptionGroupIsRejected() throws {
        let example = try CatalogFixtures.exampleConfiguration()
        var copy = StoreKitConfiguration(subscriptionGroups: example.subscriptionGroups)
        copy.subscriptionGroups?[0].subscriptions = []
        #expect(throws: SandboxError(.catalogInvalid)) { try SandboxCatalog(configurations: [example, copy]) }
    }

    @Test(arguments: [
        StoreKitConfiguration.Product(displayPrice: "0.99", type: .consumable),
        .init(displayPrice: "0.99", productID: "a b", type: .consumable),
        .init(displayPrice: "0,99", productID: "a.b", type: .consumable),
        .init(productID: "a.b", type: .consumable),
        .init(displayPrice: "0.99", productID: "a.b"),
        .init(displayPrice: "0.99", productID: "a.b", type: .recurringSubscription),
        .init(displayPrice: "0.99", productID: "a.b", type: .init("Bundle")),
    ])
    func unusableProductsAreRejected(product: StoreKitConfiguration.Product) {
        #expect(throws: SandboxError(.catalogInvalid)) {
            try SandboxCatalog(configuration: StoreKitConfiguration(products: [product]))
        }
    }

    @Test func unknownFileStorefrontIsRejected() {
        let configuration = CatalogFixtures.configuration(storefront: "ATL", products: [("a.one", "0.99")])
        #expect(throws: SandboxError(.catalogInvalid)) { try SandboxCatalog(configuration: configuration) }
        let france = Storefront(
            countryCode: "FRA", identifier: "143442", currencyCode: "EUR", localeIdentifier: "fr_FR")
        let french = CatalogFixtures.configuration(storefront: "FRA", products: [("a.one", "0.99")])
        #expect((try? SandboxCatalog(configuration: french, storefronts: Storefront.all + [france])) != nil)
    }

    @Test func subscriptionsNeedPeriodAndPricedOffers() throws {
        func catalog(_ subscription: StoreKitConfiguration.Subscription) throws -> SandboxCatalog {
            try SandboxCatalog(
                configuration: StoreKitConfiguration(subscriptionGroups: [
                    .init(id: "G1", name: "Group", subscriptions: [subscription])
                ]))
        }
        let good = StoreKitConfiguration.Subscription(
            displayPrice: "4.99", productID: "s.one", recurringSubscriptionPeriod: "P1M", subscriptionGroupID: "G1",
            type: .recurringSubscription)
        let made = try catalog(good).product(id: "s.one")
        #expect(made?.subscription?.groupLevel == 1)
        #expect(made?.subscription?.period == .oneMonth)

        var noPeriod = good
        noPeriod.recurringSubscriptionPeriod = "monthly"
        #expect(throws: SandboxError(.catalogInvalid)) { try catalog(noPeriod) }

        var paidOfferWithoutPrice = good
        paidOfferWithoutPrice.adHocOffers = [.init(offerID: "o1", paymentMode: .payAsYouGo, subscriptionPeriod: "P1M")]
        #expect(throws: SandboxError(.catalogInvalid)) { try catalog(paidOfferWithoutPrice) }

        var repeatedOffer = good
        repeatedOffer.adHocOffers = [
            .init(offerID: "o1", paymentMode: .free, subscriptionPeriod: "P1M"),
            .init(offerID: "o1", paymentMode: .free, subscriptionPeriod: "P1W"),
        ]
        #expect(throws: SandboxError(.catalogInvalid)) { try catalog(repeatedOffer) }

        var wrongGroup = good
        wrongGroup.subscriptionGroupID = "G2"
        #expect(throws: SandboxError(.catalogInvalid)) { try catalog(wrongGroup) }
    }

    @Test func bundleIDPrefixIsEnforcedOnTheCatalog() throws {
        let configuration = CatalogFixtures.configuration(products: [("jp.cubic.PaymentManagerTest.removeAd", "0.99")])
        #expect(throws: SandboxError(.catalogInvalid)) {
            try SandboxCatalog(configuration: configuration, options: CatalogOptions(bundleID: "com.example.kakin"))
        }
        #expect(
            (try? SandboxCatalog(configuration: configuration, options: .init(bundleID: "jp.cubic.PaymentManagerTest")))
                != nil)
    }

    @Test func optionsMustNameCatalogProductsAndStorefronts() throws {
        let configuration = try CatalogFixtures.exampleConfiguration()
        let bad: [CatalogOptions] = [
            CatalogOptions(hostedContent: ["com.example.kakin.nothing": .init()]),
            CatalogOptions(notClearedForSale: ["com.example.kakin.nothing"]),
            CatalogOptions(unavailableStorefronts: ["com.example.kakin.removeAd": ["ATL"]]),
            CatalogOptions(priceOverrides: ["com.example.kakin.removeAd": ["ATL": 1]]),
            CatalogOptions(priceOverrides: ["com.example.kakin.nothing": ["USA": 1]]),
            CatalogOptions(hostedContent: ["com.example.kakin.credits5": .init()]),
            CatalogOptions(hostedContent: ["com.example.kakin.premium.monthly": .init()]),
            CatalogOptions(appProblem: .unknownProduct),
        ]
        for options in bad {
            #expect(throws: SandboxError(.catalogInvalid), "\(options)") {
                try SandboxCatalog(configuration: configuration, options: options)
            }
        }
    }

    @Test func optionsCodableRoundTrip() throws {
        let url = CatalogOptions.sideFileURL(for: CatalogFixtures.exampleStoreKitFile)
        let options = try CatalogOptions.load(from: Data(contentsOf: url))
        #expect(options.hostedContent["com.example.kakin.soundPack"]?.contentLength == 4_194_304)
        var changed = options
        changed.overridePrice(Decimal(string: "0.99")!, for: "com.example.kakin.unlock", in: .unitedKingdom)
        changed.appProblem = .binaryRejected
        let data = try JSONEncoder().encode(changed)
        #expect(try CatalogOptions.load(from: data) == changed)
        #expect(String(decoding: data, as: UTF8.self).contains(#""GBR":"0.99""#))
        #expect(try CatalogOptions.load(from: Data("{}".utf8)) == CatalogOptions())
        #expect(throws: SandboxError(.catalogInvalid)) { try CatalogOptions.load(from: Data("[]".utf8)) }
    }

    @Test func errorsCompareByCode() {
        #expect(SandboxError(.unknownProduct, "one") == SandboxError(.unknownProduct, "two"))
        #expect(SandboxError(.unknownProduct) != SandboxError(.duplicateProduct))
        #expect(SandboxError(.duplicateProduct, "a.b twice").description == "duplicateProduct: a.b twice")
        #expect(SandboxError(.catalogInvalid).description == "catalogInvalid")
        #expect(Set([SandboxError(.unknownProduct, "x"), SandboxError(.unknownProduct, "y")]).count == 1)
    }
}
