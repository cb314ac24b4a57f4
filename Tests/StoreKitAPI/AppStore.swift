// The slice of StoreKit 2's `AppStore` that Kakin's StoreKit backend uses, as Apple documents it.
// Apple's documentation: https://developer.apple.com/documentation/storekit/appstore

/// An object that represents the App Store and provides information about the customer's
/// App Store account.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public enum AppStore {
    /// A Boolean value that indicates whether the person can make purchases.
    /// https://developer.apple.com/documentation/storekit/appstore/canmakepayments
    public static var canMakePayments: Bool { StoreKitTestScript.canMakePayments() }

    /// Synchronizes your app's transaction information and subscription status with information
    /// from the App Store.
    /// https://developer.apple.com/documentation/storekit/appstore/sync()
    public static func sync() async throws { try StoreKitTestScript.sync() }
}
