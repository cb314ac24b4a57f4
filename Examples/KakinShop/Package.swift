// swift-tools-version: 6.2
import Foundation
import PackageDescription

/// The root package, whose SDK the shop links. SwiftPM names a package added by path after its
/// folder (the checkout's name, `kakin` in a clone), so the products below are looked up by that
/// name rather than by the root manifest's own.
let kakinFolder = URL(fileURLWithPath: Context.packageDirectory)
    .deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

/// Swift 6 language mode (strict concurrency) and the root package's upcoming features.
let swiftSettings: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "KakinShop",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        // The shop's state and intents, for its SwiftUI screens (App/, built by the Xcode project
        // that project.yml generates) and for tests on any platform.
        .library(name: "KakinShopModel", targets: ["KakinShopModel"])
    ],
    dependencies: [
        // The SDK only: `traits: []` turns off the root's default trait, Server, so the shop
        // resolves swift-crypto, swift-asn1 and ZIPFoundation and nothing of the server's.
        .package(path: "../..", traits: [])
    ],
    targets: [
        // Foundation, Observation and the SDK: no SwiftUI, so it builds and is tested on Linux.
        .target(
            name: "KakinShopModel",
            dependencies: [
                .product(name: "KakinSDK", package: kakinFolder),
                // The server's answer types (its catalog), which the SDK shares with the server.
                .product(name: "KakinWire", package: kakinFolder),
            ],
            swiftSettings: swiftSettings
        ),
        // Runs the model against the root's `kakin serve` (KAKIN_EXECUTABLE, by default the root's
        // .build/debug/kakin) with the SDK's SandboxBackend; skipped when that binary is absent.
        .testTarget(
            name: "KakinShopModelTests",
            dependencies: [
                "KakinShopModel", .product(name: "KakinSDK", package: kakinFolder),
                // The product types' names, for products made by hand.
                .product(name: "AppStoreModels", package: kakinFolder),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
