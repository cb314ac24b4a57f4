// swift-tools-version: 6.2
import PackageDescription

/// Settings shared by every target: Swift 6 language mode with strict concurrency.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]
let serverSwiftSettings = swiftSettings + [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]

/// On Linux, where there is no StoreKit, a stand-in module of that name declares the part of
/// StoreKit 2's API the SDK's StoreKit backend uses, as Apple documents it in the iOS 27 SDK, with a
/// scripted App Store behind it (Tests/StoreKitAPI). Only the backend's target and its tests link
/// it, and only on Linux: elsewhere the manifest does not even declare it, so Apple's StoreKit is
/// the only one. It is not built with library evolution as Apple's StoreKit is: Linux's Foundation
/// is not, and a resilient module warns on each import of it; the backend's switches over StoreKit's
/// enums that are not `@frozen` keep an `@unknown default` all the same.
#if os(Linux)
let storeKitStandIn: [Target.Dependency] = ["StoreKit"]
let storeKitStandInTargets: [Target] = [
    .target(name: "StoreKit", path: "Tests/StoreKitAPI", swiftSettings: swiftSettings)
]
#else
let storeKitStandIn: [Target.Dependency] = []
let storeKitStandInTargets: [Target] = []
#endif

/// The server's side of the package, on by default: the server, the ledger, the dashboard, the
/// sandbox App Store, the trust library and the `kakin` tool, with their dependencies. An app that
/// links only the SDK (`KakinSDK`, `KakinStoreKit`) turns it off with `traits: []` on its
/// `.package` line, and then resolves only the SDK's three packages: swift-crypto, swift-asn1 and
/// ZIPFoundation. SwiftPM leaves out of resolution a dependency that only disabled traits use.
let serverTrait = "Server"

extension Target.Dependency {
    /// A product that only the server's side uses: resolved and linked with the `Server` trait only.
    static func server(_ product: String, _ package: String) -> Self {
        .product(name: product, package: package, condition: .when(traits: [serverTrait]))
    }
}

let package = Package(
    name: "Kakin",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "AppStoreModels", targets: ["AppStoreModels"]),
        .library(name: "AppStoreSecurity", targets: ["AppStoreSecurity"]),
        .library(name: "AppStoreTesting", targets: ["AppStoreTesting"]),
        .library(name: "StoreSandbox", targets: ["StoreSandbox"]),
        .library(name: "KakinLedger", targets: ["KakinLedger"]),
        .library(name: "KakinServer", targets: ["KakinServer"]),
        .library(name: "KakinDashboard", targets: ["KakinDashboard"]),
        // The SDK an app links. Its module is `Kakin` (`import Kakin`); the product has another name
        // so that no two products differ only in case from the executable `kakin`.
        .library(name: "KakinSDK", targets: ["Kakin"]),
        .library(name: "KakinStoreKit", targets: ["KakinStoreKit"]),
        .library(name: "KakinWire", targets: ["KakinWire"]),
        .executable(name: "kakin", targets: ["KakinTool"]),
    ],
    traits: [
        .trait(
            name: serverTrait,
            description: "The server, the ledger, the dashboard, the sandbox App Store, the trust library and the kakin tool. An app that links only the SDK turns it off."
        ),
        .default(enabledTraits: [serverTrait]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation.git", from: "0.9.20"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Apple's wire formats as Codable value types. No I/O.
        .target(
            name: "AppStoreModels",
            dependencies: [.product(name: "SwiftASN1", package: "swift-asn1")],
            swiftSettings: swiftSettings
        ),
        // Trust: verifying JWS, certificate chains, app receipts and OCSP answers; API tokens.
        .target(
            name: "AppStoreSecurity",
            dependencies: [
                "AppStoreModels",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .server("X509", "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        // Minting for tests and the sandbox: a certificate authority shaped like Apple's, JWS and
        // app receipt signing, OCSP answers. Never linked by the server's verify path.
        .target(
            name: "AppStoreTesting",
            dependencies: [
                "AppStoreModels",
                "AppStoreSecurity",
                "KakinCore",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .server("X509", "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        // HTTP helpers shared by the sandbox and the server: ranged downloads with ETag.
        .target(
            name: "KakinHTTP",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .server("Hummingbird", "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        // The local App Store: catalog, storefronts, sandbox testers, purchases on an injected clock.
        .target(
            name: "StoreSandbox",
            dependencies: [
                "AppStoreModels",
                "AppStoreSecurity",
                "AppStoreTesting",
                "KakinHTTP",
                "KakinWire",
                .product(name: "Crypto", package: "swift-crypto"),
                .server("GRDB", "GRDB.swift"),
                .server("Hummingbird", "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        // What the API contract and the ledger both need, and nothing else: the anonymous app user
        // ID's format, the period types and offer signature kinds the ledger keeps and the API
        // answers, and the JSON writer both use; and the owner-only files that the ledger, the
        // sandbox's certificate authority and the server's keys are written as. Foundation only.
        .target(
            name: "KakinCore",
            swiftSettings: swiftSettings
        ),
        // The purchase server's API contract, shared by the SDK and the server: routes, header and
        // query names, request and answer types, JSON settings. Foundation only.
        .target(
            name: "KakinWire",
            dependencies: ["KakinCore", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // The SDK an app links: no server dependencies, Foundation networking only; hosted content
        // is unpacked with ZIPFoundation (zlib on Linux, Compression on Apple platforms). Crash points
        // for the kill tests exist in debug builds only.
        .target(
            name: "Kakin",
            dependencies: [
                "AppStoreModels", "KakinCore", "KakinWire", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            swiftSettings: swiftSettings + [.define("KAKIN_CRASH_POINTS", .when(configuration: .debug))]
        ),
        // The SDK's StoreKit 2 backend, on Apple platforms with Apple's StoreKit. On Linux it is
        // compiled against the stand-in below, so that it builds and is tested everywhere.
        .target(
            name: "KakinStoreKit",
            dependencies: ["Kakin", "AppStoreModels"] + storeKitStandIn,
            swiftSettings: swiftSettings
        ),
        // The ledger: what is recorded (transactions, balances, events, calls owed to Apple), the
        // rules that derive entitlements and credits, and the store on SQLite or PostgreSQL.
        .target(
            name: "KakinLedger",
            dependencies: [
                "AppStoreModels",
                "KakinCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .server("GRDB", "GRDB.swift"),
                .server("PostgresNIO", "postgres-nio"),
                .server("Logging", "swift-log"),
            ],
            swiftSettings: serverSwiftSettings
        ),
        // The purchase server: verify, record once in a ledger, grant; SQLite by default.
        .target(
            name: "KakinServer",
            dependencies: [
                "AppStoreModels",
                "AppStoreSecurity",
                "KakinHTTP",
                "KakinCore",
                "KakinLedger",
                "KakinWire",
                .product(name: "Crypto", package: "swift-crypto"),
                .server("Hummingbird", "hummingbird"),
                .server("NIOHTTPTypes", "swift-nio-extras"),
                .server("Logging", "swift-log"),
                .server("Metrics", "swift-metrics"),
                .server("Prometheus", "swift-prometheus"),
                .server("ServiceLifecycle", "swift-service-lifecycle"),
            ],
            // The OpenAPI document.
            resources: [.copy("Resources")],
            swiftSettings: serverSwiftSettings
        ),
        // The operators' dashboard: server-rendered pages over the server's read API, added to a
        // server when it is built.
        .target(
            name: "KakinDashboard",
            dependencies: [
                "KakinServer",
                "KakinLedger",
                "KakinCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .server("Hummingbird", "hummingbird"),
                .server("Logging", "swift-log"),
                .server("Mustache", "swift-mustache"),
            ],
            // The templates and the style sheet.
            resources: [.copy("Resources")],
            swiftSettings: serverSwiftSettings
        ),
        // Command-line logic lives in a library so that tests can drive it in-process.
        .target(
            name: "KakinCLI",
            dependencies: [
                "AppStoreModels",
                "AppStoreSecurity",
                "AppStoreTesting",
                "StoreSandbox",
                "KakinServer",
                "KakinLedger",
                "KakinDashboard",
                "KakinCore",
                "KakinWire",
                "Kakin",
                .server("Hummingbird", "hummingbird"),
                .server("ServiceLifecycle", "swift-service-lifecycle"),
                .server("Logging", "swift-log"),
                .server("ArgumentParser", "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .server("X509", "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        // The `kakin` executable: only its entry point (the commands live in KakinCLI).
        .executableTarget(
            name: "KakinTool",
            dependencies: ["KakinCLI"],
            swiftSettings: swiftSettings
        ),
        // What the test targets share: the example app's identity and catalog, sandbox App Stores
        // that sell it, a server wired to one, Apple's shared fixtures. Only test targets use it.
        .target(
            name: "KakinTestSupport",
            dependencies: [
                "AppStoreTesting", "StoreSandbox", "KakinServer", "KakinLedger", "KakinCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Tests/KakinTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AppStoreModelsTests",
            dependencies: ["AppStoreModels", "KakinTestSupport"],
            resources: [.copy("Resources")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AppStoreSecurityTests",
            dependencies: [
                "AppStoreSecurity", "AppStoreTesting",
                "AppStoreModels", "KakinTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            exclude: ["Vectors"],
            swiftSettings: swiftSettings
        ),
        // The ledger's contract on every engine, its rules and its group commit.
        .testTarget(
            name: "KakinLedgerTests",
            dependencies: [
                "KakinLedger", "KakinCore", "KakinTestSupport", "AppStoreModels",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "StoreSandboxTests",
            dependencies: [
                "StoreSandbox", "AppStoreModels", "AppStoreSecurity", "AppStoreTesting", "KakinTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KakinServerTests",
            dependencies: [
                "KakinServer", "KakinLedger", "KakinDashboard", "KakinCore", "KakinWire", "StoreSandbox", "AppStoreModels",
                "AppStoreSecurity", "AppStoreTesting", "KakinTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                // The backup and fault tests look inside the ledger's databases and run the server
                // in a service group.
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KakinDashboardTests",
            dependencies: [
                "KakinDashboard", "KakinServer", "KakinLedger", "StoreSandbox", "KakinTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KakinCoreTests",
            dependencies: ["KakinCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KakinWireTests",
            dependencies: [
                "KakinWire", "KakinCore", "Kakin",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KakinTests",
            dependencies: [
                "Kakin", "KakinServer", "KakinLedger", "KakinCore", "KakinWire", "StoreSandbox", "AppStoreModels", "AppStoreSecurity", "AppStoreTesting",
                "KakinTestSupport",
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KakinStoreKitTests",
            dependencies: ["KakinStoreKit", "Kakin", "KakinWire", "AppStoreModels"] + storeKitStandIn,
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KakinCLITests",
            dependencies: [
                "KakinCLI", "AppStoreSecurity", "AppStoreTesting", "AppStoreModels", "KakinServer", "KakinLedger", "KakinDashboard",
                "KakinCore", "StoreSandbox", "KakinTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
    ] + storeKitStandInTargets
)
