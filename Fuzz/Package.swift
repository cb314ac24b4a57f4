// swift-tools-version:5.4
import PackageDescription

/// libFuzzer targets for Kakin's parsers, kept out of the main package so that it needs no
/// sanitizer or unsafe flags. `scripts/fuzz` builds them with `-sanitize=fuzzer,address` applied to
/// every module, so the parsing code under test is instrumented too, and runs them.
let package = Package(
    name: "KakinFuzz",
    dependencies: [.package(name: "Kakin", path: "..")],
    targets: [
        .executableTarget(
            name: "FuzzJWS",
            dependencies: [
                .product(name: "AppStoreSecurity", package: "Kakin"),
                .product(name: "AppStoreModels", package: "Kakin"),
            ]
        ),
        .executableTarget(
            name: "FuzzReceipt",
            dependencies: [
                .product(name: "AppStoreSecurity", package: "Kakin"),
                .product(name: "AppStoreModels", package: "Kakin"),
            ]
        ),
        .executableTarget(
            name: "FuzzStoreKit",
            dependencies: [.product(name: "AppStoreModels", package: "Kakin")]
        ),
        .executableTarget(
            name: "FuzzVerifyReceipt",
            dependencies: [.product(name: "AppStoreModels", package: "Kakin")]
        ),
    ]
)
