import Foundation
import StoreSandbox

/// The example app of the repository (`Examples/Catalog`): its identity in the App Store and the
/// files of its catalog, as the tests use them.
public enum ExampleApp {
    /// The example app's bundle ID.
    public static let bundleID = "com.example.kakin"
    /// The example app's Apple ID (its App Store ID).
    public static let appAppleID: Int64 = 6_450_000_001
    /// What every product ID of the example catalog starts with.
    public static let productIDPrefix = bundleID + "."

    /// The product ID of the example catalog's product `name`: `productID("unlock")` is
    /// `com.example.kakin.unlock`.
    public static func productID(_ name: String) -> String { productIDPrefix + name }

    /// The repository's root folder: this file is `Tests/KakinTestSupport/ExampleApp.swift`.
    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // KakinTestSupport
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// `Examples/Catalog`, the folder of the example catalog.
    public static let catalogDirectory = repositoryRoot.appendingPathComponent("Examples/Catalog", isDirectory: true)
    /// `Examples/Catalog/Kakin.storekit`, the example catalog as Xcode writes it.
    public static let storeKitFile = catalogDirectory.appendingPathComponent("Kakin.storekit")
    /// `Examples/Catalog/Kakin.grants.json`, what the server grants for each product of the catalog.
    public static let grantsFile = catalogDirectory.appendingPathComponent("Kakin.grants.json")

    /// The example catalog (the StoreKit file with its side file), loaded for the sandbox.
    public static func catalog() throws -> SandboxCatalog {
        try SandboxCatalog.load(storeKitFile: storeKitFile)
    }
}
