public import AppStoreModels
public import Foundation

/// The products the sandbox App Store sells, read from one or more Xcode `.storekit` files.
///
/// The catalog merges the files, checks them once, and then answers product requests for any
/// storefront as the App Store does: the products it can sell there, with texts in the
/// storefront's language and prices in its currency, and the IDs it cannot, each with the reason
/// (``InvalidProductReason``).
///
/// ```swift
/// let catalog = try SandboxCatalog.load(storeKitFile: url)   // also reads Kakin.catalog.json
/// let (products, invalid) = catalog.localizedProducts(
///     for: ["com.example.kakin.removeAd", "com.example.kakin.typo"], storefront: .japan)
/// // products[0].displayName == "広告削除", products[0].displayPrice == "¥100"
/// // invalid[0].reason == .unknownProduct
/// ```
///
/// Prices come from each file's `displayPrice`, in the currency of the file's `_storefront`, and
/// are carried to other currencies by a ``PriceTierTable`` unless ``CatalogOptions/priceOverrides``
/// pins them. The catalog is an immutable value, safe to share between tasks.
public struct SandboxCatalog: Sendable {
    /// Every product, in the order of the files: products, non-renewing subscriptions, then
    /// subscription groups.
    public let products: [CatalogProduct]
    /// The options the catalog was built with.
    public let options: CatalogOptions
    /// The table that prices products in other currencies.
    public let priceTable: PriceTierTable
    /// The storefronts the catalog knows, used to read each file's `_storefront` and to check the
    /// country codes in ``options``.
    public let storefronts: [Storefront]

    private let positions: [String: Int]

    /// Builds a catalog from several configurations.
    ///
    /// - Throws: ``SandboxError/Code/duplicateProduct`` when a product ID appears twice, in one
    ///   file or across files; ``SandboxError/Code/catalogInvalid`` when a product lacks an ID, a
    ///   known type, a price or a period, when its ID is malformed or lacks the bundle ID prefix,
    ///   or when the options name a product or storefront the catalog does not have.
    public init(
        configurations: [StoreKitConfiguration], options: CatalogOptions = CatalogOptions(),
        priceTable: PriceTierTable = .standard, storefronts: [Storefront] = Storefront.all
    ) throws(SandboxError) {
        var builder = CatalogBuilder(options: options, storefronts: storefronts)
        for configuration in configurations {
            try builder.add(configuration)
        }
        try builder.checkOptions()
        self.products = builder.products
        self.positions = builder.positions
        self.options = options
        self.priceTable = priceTable
        self.storefronts = storefronts
    }

    /// Builds a catalog from one configuration.
    public init(
        configuration: StoreKitConfiguration, options: CatalogOptions = CatalogOptions(),
        priceTable: PriceTierTable = .standard, storefronts: [Storefront] = Storefront.all
    ) throws(SandboxError) {
        try self.init(
            configurations: [configuration], options: options, priceTable: priceTable, storefronts: storefronts)
    }

    /// Reads a `.storekit` file and builds its catalog.
    ///
    /// When `options` is `nil`, the options come from the file's side file
    /// (``CatalogOptions/sideFileURL(for:)``) if there is one, and are the defaults otherwise.
    public static func load(
        storeKitFile url: URL, options: CatalogOptions? = nil, priceTable: PriceTierTable = .standard,
        storefronts: [Storefront] = Storefront.all
    ) throws(SandboxError) -> SandboxCatalog {
        let configuration: StoreKitConfiguration
        do {
            configuration = try StoreKitConfiguration.load(from: Data(contentsOf: url))
        } catch {
            throw SandboxError(.catalogInvalid, "\(url.lastPathComponent) cannot be read: \(error)")
        }
        var resolved = options ?? CatalogOptions()
        let sideFile = CatalogOptions.sideFileURL(for: url)
        if options == nil, FileManager.default.fileExists(atPath: sideFile.path) {
            let data: Data
            do {
                data = try Data(contentsOf: sideFile)
            } catch {
                throw SandboxError(.catalogInvalid, "\(sideFile.lastPathComponent) cannot be read: \(error)")
            }
            resolved = try CatalogOptions.load(from: data)
        }
        return try SandboxCatalog(
            configuration: configuration, options: resolved, priceTable: priceTable, storefronts: storefronts)
    }

    /// Every product ID, in catalog order.
    public var productIDs: [String] { products.map(\.id) }

    /// The product with this ID, or `nil`.
    public func product(id: String) -> CatalogProduct? {
        positions[id].map { products[$0] }
    }

    /// The products of the subscription group with this ID, highest level (1) first.
    public func subscriptions(inGroup groupID: String) -> [CatalogProduct] {
        products.filter { $0.subscription?.groupID == groupID }
            .sorted { ($0.subscription?.groupLevel ?? 0) < ($1.subscription?.groupLevel ?? 0) }
    }
}
