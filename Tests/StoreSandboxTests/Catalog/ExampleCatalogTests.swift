import AppStoreModels
import Foundation
import StoreSandbox
import Testing

@Suite struct ExampleCatalogTests {
    @Test func fileHasXcodeShape() throws {
        let configuration = try CatalogFixtures.exampleConfiguration()
        #expect(configuration.version == .init(major: 4, minor: 0))
        #expect(configuration.settings?.storefront == "USA")
        #expect(configuration.settings?.locale == "en_US")
        #expect(configuration.allProductIDs == CatalogFixtures.exampleProductIDs)
        #expect(configuration.products?.count == 6)
        #expect(configuration.nonRenewingSubscriptions?.map(\.type) == [.nonRenewingSubscription])
        let group = try #require(configuration.subscriptionGroups?.first)
        #expect(group.name == "Premium")
        #expect(group.subscriptions?.allSatisfy { $0.subscriptionGroupID == group.id } == true)
    }

    @Test func everyProductAndTheGroupHaveBothLocales() throws {
        let configuration = try CatalogFixtures.exampleConfiguration()
        var localizationLists: [[StoreKitConfiguration.Localization]] =
            ((configuration.products ?? []) + (configuration.nonRenewingSubscriptions ?? [])).map {
                $0.localizations ?? []
            }
        localizationLists += configuration.allSubscriptions.map { $0.localizations ?? [] }
        localizationLists += (configuration.subscriptionGroups ?? []).map { $0.localizations ?? [] }
        #expect(localizationLists.count == 10)
        for localizations in localizationLists {
            #expect(Set(localizations.compactMap(\.locale)) == ["en_US", "ja_JP"])
            for localization in localizations {
                #expect(!(localization.displayName ?? "").isEmpty)
                // App Store Connect wants a description of at least ten characters.
                #expect((localization.description ?? "").count >= 10, "\(localization)")
            }
            let japanese = try #require(localizations.first { $0.locale == "ja_JP" })
            #expect(japanese.description?.unicodeScalars.contains { $0.value >= 0x3040 && $0.value <= 0x30FF } == true)
        }
    }

    @Test func catalogLoadsWithSideFile() throws {
        let catalog = try CatalogFixtures.exampleCatalog()
        #expect(catalog.productIDs == CatalogFixtures.exampleProductIDs)
        #expect(catalog.options.bundleID == "com.example.kakin")
        #expect(catalog.product(id: "com.example.kakin.soundPack")?.hostedContent?.contentVersion == "1.0")
        #expect(catalog.options.unavailableStorefronts["com.example.kakin.seasonPass"] == ["CHN"])
        #expect(
            CatalogOptions.sideFileURL(for: CatalogFixtures.exampleStoreKitFile).lastPathComponent
                == "Kakin.catalog.json")
    }

    @Test(arguments: [
        ("removeAd", ProductType.nonConsumable, "0.99"), ("increasePoints", .consumable, "0.99"),
        ("credits5", .consumable, "0.99"), ("credits10", .consumable, "1.99"), ("unlock", .nonConsumable, "2.99"),
        ("soundPack", .nonConsumable, "1.99"), ("seasonPass", .nonRenewingSubscription, "9.99"),
        ("premium.monthly", .autoRenewableSubscription, "4.99"),
        ("premium.yearly", .autoRenewableSubscription, "49.99"),
    ])
    func productTypesAndPrices(name: String, type: ProductType, price: String) throws {
        let catalog = try CatalogFixtures.exampleCatalog()
        let product = try #require(catalog.product(id: CatalogFixtures.prefix + name))
        #expect(product.type == type)
        #expect(product.price == Decimal(string: price, locale: Locale(identifier: "en_US_POSIX")))
        #expect(product.currencyCode == "USD")
        #expect(PriceTierTable.standard.tier(matching: product.price, currencyCode: "USD") != nil)
    }

    @Test func premiumGroupLevels() throws {
        let catalog = try CatalogFixtures.exampleCatalog()
        let groupID = try #require(catalog.product(id: "com.example.kakin.premium.yearly")?.subscription?.groupID)
        let levels = catalog.subscriptions(inGroup: groupID).map { ($0.id, $0.subscription!.groupLevel) }
        #expect(levels.map(\.0) == ["com.example.kakin.premium.yearly", "com.example.kakin.premium.monthly"])
        #expect(levels.map(\.1) == [1, 2])
    }

    @Test func loadingWithoutSideFileUsesExplicitOptions() throws {
        let catalog = try SandboxCatalog.load(storeKitFile: CatalogFixtures.exampleStoreKitFile, options: .init())
        #expect(catalog.product(id: "com.example.kakin.soundPack")?.hostedContent == nil)
        #expect(catalog.options.bundleID == nil)
    }

    @Test func missingFileIsCatalogInvalid() {
        let url = CatalogFixtures.exampleStoreKitFile.deletingLastPathComponent().appendingPathComponent(
            "None.storekit")
        #expect(throws: SandboxError(.catalogInvalid)) { try SandboxCatalog.load(storeKitFile: url) }
    }
}
