// swift-tools-version: 6.1
import PackageDescription

// Benchmarks live in their own package so that building or testing Kakin never builds the
// benchmark harness. Run with `scripts/benchmark` (release build).
let package = Package(
    name: "KakinBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Kakin", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
    ],
    targets: [
        .executableTarget(
            name: "JWSVerification",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "AppStoreSecurity", package: "Kakin"),
                .product(name: "AppStoreTesting", package: "Kakin"),
                .product(name: "AppStoreModels", package: "Kakin"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Benchmarks/JWSVerification",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ServerPath",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "AppStoreSecurity", package: "Kakin"),
                .product(name: "AppStoreTesting", package: "Kakin"),
                .product(name: "AppStoreModels", package: "Kakin"),
                .product(name: "KakinServer", package: "Kakin"),
                .product(name: "KakinLedger", package: "Kakin"),
                .product(name: "KakinWire", package: "Kakin"),
                .product(name: "KakinSDK", package: "Kakin"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Benchmarks/ServerPath",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "SandboxPurchase",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "StoreSandbox", package: "Kakin"),
                .product(name: "AppStoreSecurity", package: "Kakin"),
                .product(name: "AppStoreTesting", package: "Kakin"),
                .product(name: "AppStoreModels", package: "Kakin"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Benchmarks/SandboxPurchase",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
