import AppStoreModels
import Foundation
import StoreSandbox
import Testing

@Suite struct LocalizedProductTests {
    private let ids = CatalogFixtures.exampleProductIDs

    private func decimal(_ text: String) -> Decimal {
        Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))!
    }

    private func product(_ name: String, in storefront: Storefront) throws -> LocalizedProduct {
        try CatalogFixtures.exampleCatalog().localizedProduct(id: CatalogFixtures.prefix + name, storefront: storefront)
    }

    @Test func unitedStatesProducts() throws {
        let response = try CatalogFixtures.exampleCatalog().localizedProducts(for: ids, storefront: .usa)
        #expect(response.invalidIdentifiers.isEmpty)
        #expect(response.products.map(\.id) == ids)
        let removeAd = response.products[0]
        #expect(removeAd.displayName == "Remove Ads")
        #expect(removeAd.description == "Removes the ads shown in the app.")
        #expect(removeAd.price == decimal("0.99"))
        #expect(removeAd.displayPrice == "$0.99")
        #expect(removeAd.currencyCode == "USD")
        #expect(removeAd.priceLocaleIdentifier == "en_US")
        #expect(removeAd.storefrontCountryCode == "USA")
        #expect(removeAd.storefrontIdentifier == "143441")
        #expect(removeAd.localizationLocale == "en_US")
        #expect(removeAd.type == .nonConsumable)
        #expect(removeAd.isFamilyShareable)
        #expect(removeAd.subscription == nil)
        #expect(!removeAd.isDownloadable)
        #expect(
            response.products.map(\.displayPrice) == [
                "$0.99", "$0.99", "$0.99", "$1.99", "$2.99", "$1.99", "$9.99", "$4.99", "$49.99",
            ])
    }

    @Test func japanProducts() throws {
        let response = try CatalogFixtures.exampleCatalog().localizedProducts(for: ids, storefront: .japan)
        #expect(response.invalidIdentifiers.isEmpty)
        let removeAd = response.products[0]
        #expect(removeAd.displayName == "広告削除")
        #expect(removeAd.description == "表示されている広告を削除します。")
        #expect(removeAd.price == 100)
        #expect(removeAd.displayPrice == "¥100")
        #expect(removeAd.currencyCode == "JPY")
        #expect(removeAd.priceLocaleIdentifier == "ja_JP")
        #expect(removeAd.storefrontCountryCode == "JPN")
        #expect(removeAd.storefrontIdentifier == "143462")
        #expect(removeAd.localizationLocale == "ja_JP")
        #expect(response.products[1].displayName == "100ポイント")
        #expect(
            response.products.map(\.displayPrice) == [
                "¥100", "¥100", "¥100", "¥200", "¥300", "¥200", "¥1,000", "¥500", "¥5,000",
            ])
    }

    @Test(arguments: [
        (Storefront.germany, "0,99 €", "en_US"), (Storefront.unitedKingdom, "£0.99", "en_US"),
        (Storefront.china, "¥6.00", "en_US"),
    ])
    func otherStorefrontsUseEnglishTexts(storefront: Storefront, displayPrice: String, locale: String) throws {
        let removeAd = try product("removeAd", in: storefront)
        #expect(removeAd.displayPrice == displayPrice)
        #expect(removeAd.currencyCode == storefront.currencyCode)
        #expect(removeAd.displayName == "Remove Ads")
        #expect(removeAd.localizationLocale == locale)
    }

    @Test func chinaPricesFollowChinaPricePoints() throws {
        let response = try CatalogFixtures.exampleCatalog().localizedProducts(for: ids, storefront: .china)
        #expect(response.products.map(\.price) == [6, 6, 6, 12, 18, 12, 30, 328])
        #expect(response.products.last?.displayPrice == "¥328.00")
        // The side file stops selling the season pass in China.
        #expect(response.invalidIdentifiers.map(\.reason) == [.notAvailableInStorefront])
    }

    @Test func germanyPricesAreInEuros() throws {
        let yearly = try product("premium.yearly", in: .germany)
        #expect(yearly.price == decimal("49.99"))
        #expect(yearly.displayPrice == "49,99 €")
    }

    @Test func subscriptionInfoAndOffersInJapan() throws {
        let monthly = try product("premium.monthly", in: .japan)
        #expect(monthly.type == .autoRenewableSubscription)
        #expect(monthly.displayName == "プレミアム（月額）")
        #expect(monthly.displayPrice == "¥500")
        let info = try #require(monthly.subscription)
        #expect(info.subscriptionGroupDisplayName == "Kakinプレミアム")
        #expect(info.groupLevel == 2)
        #expect(info.subscriptionPeriod == "P1M")
        #expect(info.subscriptionPeriodValue == .oneMonth)
        let intro = try #require(info.introductoryOffer)
        #expect(intro.id == nil)
        #expect(intro.type == .introductory)
        #expect(intro.paymentMode == .free)
        #expect(intro.periodValue == .oneWeek)
        #expect(intro.periodCount == 1)
        #expect(intro.price == 0)
        #expect(intro.displayPrice == "¥0")
        let promotional = try #require(info.promotionalOffers.first)
        #expect(info.promotionalOffers.map(\.id) == ["com.example.kakin.premium.monthly.comeback", "comeback50"])
        #expect(promotional.id == "com.example.kakin.premium.monthly.comeback")
        #expect(promotional.type == .promotional)
        #expect(promotional.paymentMode == .payAsYouGo)
        #expect(promotional.period == "P1M")
        #expect(promotional.periodCount == 3)
        #expect(promotional.price == 200)
        #expect(promotional.displayPrice == "¥200")
    }

    @Test func subscriptionInfoInTheUnitedStates() throws {
        let yearly = try product("premium.yearly", in: .usa)
        let info = try #require(yearly.subscription)
        #expect(info.subscriptionGroupDisplayName == "Kakin Premium")
        #expect(info.groupLevel == 1)
        #expect(info.subscriptionPeriodValue == .oneYear)
        #expect(info.introductoryOffer?.displayPrice == "$0.00")
        #expect(info.promotionalOffers.map(\.displayPrice) == ["$29.99"])
        #expect(info.promotionalOffers.map(\.id) == ["com.example.kakin.premium.yearly.loyalty"])
        #expect(
            try product("premium.yearly", in: .germany).subscription?.promotionalOffers.first?.displayPrice
                == "29,99 €")
    }

    @Test func nonRenewingSubscriptionHasNoSubscriptionInfo() throws {
        let pass = try product("seasonPass", in: .usa)
        #expect(pass.type == .nonRenewingSubscription)
        #expect(pass.subscription == nil)
    }

    @Test func hostedContent() throws {
        let pack = try product("soundPack", in: .japan)
        #expect(pack.isDownloadable)
        #expect(pack.downloadContentVersion == "1.0")
        #expect(pack.downloadContentLengths == [4_194_304])
        #expect(pack.displayName == "サウンドパック")
        let unlock = try product("unlock", in: .japan)
        #expect(!unlock.isDownloadable)
        #expect(unlock.downloadContentVersion == nil)
        #expect(unlock.downloadContentLengths.isEmpty)
    }

    @Test func responseKeepsRequestOrderAndAnswersRepeatsOnce() throws {
        let catalog = try CatalogFixtures.exampleCatalog()
        let request = ["com.example.kakin.unlock", "com.example.kakin.removeAd", "com.example.kakin.unlock"]
        let response = catalog.localizedProducts(for: request, storefront: .usa)
        #expect(response.products.map(\.id) == ["com.example.kakin.unlock", "com.example.kakin.removeAd"])
        #expect(catalog.localizedProducts(for: [], storefront: .usa).products.isEmpty)
    }

    @Test func overridesPinAPricePerStorefront() throws {
        var options = try CatalogOptions.load(
            from: Data(contentsOf: CatalogOptions.sideFileURL(for: CatalogFixtures.exampleStoreKitFile)))
        options.overridePrice(120, for: "com.example.kakin.removeAd", in: .japan)
        options.overridePrice(decimal("1.09"), for: "com.example.kakin.removeAd", in: .germany)
        let catalog = try SandboxCatalog.load(storeKitFile: CatalogFixtures.exampleStoreKitFile, options: options)
        let japan = try catalog.localizedProduct(id: "com.example.kakin.removeAd", storefront: .japan)
        #expect(japan.price == 120)
        #expect(japan.displayPrice == "¥120")
        let germany = try catalog.localizedProduct(id: "com.example.kakin.removeAd", storefront: .germany)
        #expect(germany.displayPrice == "1,09 €")
        // Other storefronts and products keep the tier table's prices.
        #expect(
            try catalog.localizedProduct(id: "com.example.kakin.removeAd", storefront: .usa).displayPrice == "$0.99")
        #expect(try catalog.localizedProduct(id: "com.example.kakin.unlock", storefront: .japan).price == 300)
    }

    @Test func overridesFromSideFileJSON() throws {
        let json = #"{"priceOverrides": {"P.one": {"JPN": "150", "USA": "0.49"}}}"#
        let options = try CatalogOptions.load(from: Data(json.utf8))
        #expect(options.priceOverrides["P.one"]?["USA"] == decimal("0.49"))
        let catalog = try SandboxCatalog(
            configuration: CatalogFixtures.configuration(products: [("P.one", "0.99")]), options: options)
        let response = catalog.localizedProducts(for: ["P.one"], storefront: .japan)
        #expect(response.products.first?.displayPrice == "¥150")
        #expect(try catalog.localizedProduct(id: "P.one", storefront: .usa).displayPrice == "$0.49")
        #expect(throws: SandboxError(.catalogInvalid)) {
            try CatalogOptions.load(from: Data(#"{"priceOverrides": {"P.one": {"JPN": "1,50"}}}"#.utf8))
        }
    }

    @Test func localizationFallsBackToFirstThenReferenceName() throws {
        let configuration = StoreKitConfiguration(
            products: [
                .init(
                    displayPrice: "0.99",
                    localizations: [
                        .init(description: "Nur auf Deutsch beschrieben.", displayName: "Nur Deutsch", locale: "de_DE"),
                        .init(description: "Seulement en français.", displayName: "Français", locale: "fr_FR"),
                    ],
                    productID: "a.german", type: .consumable),
                .init(displayPrice: "0.99", productID: "a.bare", referenceName: "Bare", type: .consumable),
            ])
        let catalog = try SandboxCatalog(configuration: configuration)
        #expect(try catalog.localizedProduct(id: "a.german", storefront: .japan).displayName == "Nur Deutsch")
        #expect(try catalog.localizedProduct(id: "a.german", storefront: .germany).localizationLocale == "de_DE")
        let bare = try catalog.localizedProduct(id: "a.bare", storefront: .usa)
        #expect(bare.displayName == "Bare")
        #expect(bare.description == "")
        #expect(bare.localizationLocale == nil)
    }

    @Test func filesInAnotherStorefrontArePricedInItsCurrency() throws {
        let configuration = CatalogFixtures.configuration(
            storefront: "JPN", products: [("j.one", "300"), ("j.two", "250")])
        let catalog = try SandboxCatalog(configuration: configuration)
        #expect(catalog.product(id: "j.one")?.currencyCode == "JPY")
        #expect(try catalog.localizedProduct(id: "j.one", storefront: .japan).displayPrice == "¥300")
        #expect(try catalog.localizedProduct(id: "j.one", storefront: .usa).displayPrice == "$2.99")
        #expect(try catalog.localizedProduct(id: "j.two", storefront: .japan).price == 250)
        // ¥250 matches no tier: the ¥200 tier converts it (about 2.49) and rounds it to $1.99.
        #expect(try catalog.localizedProduct(id: "j.two", storefront: .usa).price == decimal("1.99"))
    }

    @Test func codableRoundTrip() throws {
        let catalog = try CatalogFixtures.exampleCatalog()
        for storefront in Storefront.all {
            for product in catalog.localizedProducts(for: ids, storefront: storefront).products {
                let data = try JSONEncoder().encode(product)
                #expect(try JSONDecoder().decode(LocalizedProduct.self, from: data) == product)
            }
        }
        let monthly = try product("premium.monthly", in: .usa)
        let object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(monthly)) as? [String: Any])
        #expect(object["type"] as? String == "Auto-Renewable Subscription")
        #expect(object["displayPrice"] as? String == "$4.99")
    }
}
