import AppStoreModels
import Foundation

/// Feeds any bytes to the `.storekit` decoder, checks what it read with the App Store Connect
/// rules of `kakin catalog lint`, then writes it back out and reads it again. Throwing is the expected answer to bad input; any crash or memory error is a bug.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStoreKit(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    guard let configuration = try? StoreKitConfiguration.load(from: bytes) else { return 0 }
    let lint = StoreKitConfigurationLint(
        bundleID: "com.example.kakin", hostedContentProductIDs: ["com.example.kakin.soundPack"])
    _ = lint.problems(in: configuration).map(\.description)
    if let encoded = try? configuration.encodedJSON() {
        _ = try? StoreKitConfiguration.load(from: encoded)
    }
    return 0
}
