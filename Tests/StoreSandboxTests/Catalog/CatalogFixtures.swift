import AppStoreModels
import Foundation
import KakinTestSupport
import StoreSandbox

/// The example catalog of the repository, and small configurations built in code.
enum CatalogFixtures {
    /// `Examples/Catalog/Kakin.storekit` at the repository root.
    static let exampleStoreKitFile = ExampleApp.storeKitFile

    static let prefix = ExampleApp.productIDPrefix

    /// Every product ID of the example file, in file order.
    static let exampleProductIDs = [
        "removeAd", "increasePoints", "credits5", "credits10", "unlock", "soundPack", "seasonPass",
        "premium.monthly", "premium.yearly",
    ].map { prefix + $0 }

    static func exampleConfiguration() throws -> StoreKitConfiguration {
        try StoreKitConfiguration.load(from: Data(contentsOf: exampleStoreKitFile))
    }

    /// The example catalog with its side file.
    static func exampleCatalog() throws -> SandboxCatalog {
        try ExampleApp.catalog()
    }

    /// A configuration with one product per price, all non-consumables, in the given storefront.
    static func configuration(
        identifier: String = "TEST", storefront: String = "USA", products: [(id: String, price: String)]
    ) -> StoreKitConfiguration {
        StoreKitConfiguration(
            identifier: identifier,
            products: products.map { entry in
                StoreKitConfiguration.Product(
                    displayPrice: entry.price, familyShareable: false,
                    localizations: [
                        .init(
                            description: "A product made for tests.", displayName: "Test \(entry.id)", locale: "en_US")
                    ],
                    productID: entry.id, referenceName: entry.id, type: .nonConsumable)
            },
            settings: .init(locale: "en_US", storefront: storefront),
            version: .init(major: 4, minor: 0))
    }
}
