// The slice of StoreKit 2's `AppStore` that Kakin's StoreKit backend uses, as Apple declares it.
// Apple's documentation: https://developer.apple.com/documentation/storekit/appstore

/// An object that represents the App Store and provides information about the customer's
/// App Store account.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public enum AppStore {
    /// A Boolean value that indicates whether the person can make purchases.
    /// https://developer.apple.com/documentation/storekit/appstore/canmakepayments
    public static var canMakePayments: Bool { StoreKitTestScript.canMakePayments() }

    /// Synchronizes your app's transaction information and subscription status with information
    /// from the App Store; may ask the customer to sign in. Throws `StoreKitError`
    /// (`userCancelled` when the customer does not sign in).
    /// https://developer.apple.com/documentation/storekit/appstore/sync()
    public static func sync() async throws { try StoreKitTestScript.sync() }
}

@available(iOS 15.0, visionOS 1.0, *)
@available(macOS, unavailable)
@available(watchOS, unavailable)
@available(tvOS, unavailable)
extension AppStore {
    /// Displays the App Store's manage-subscriptions sheet in a window scene. Throws `StoreKitError`.
    /// https://developer.apple.com/documentation/storekit/appstore/showmanagesubscriptions(in:)
    @available(iOS 15.0, visionOS 1.0, *)
    @available(macOS, unavailable)
    @available(watchOS, unavailable)
    @available(tvOS, unavailable)
    @MainActor
    public static func showManageSubscriptions(in scene: UIWindowScene) async throws {
        try StoreKitTestScript.showManageSubscriptions(in: ObjectIdentifier(scene), subscriptionGroupID: nil)
    }

    /// Displays the manage-subscriptions sheet for one subscription group in a window scene.
    /// https://developer.apple.com/documentation/storekit/appstore/showmanagesubscriptions(in:subscriptiongroupid:)
    @available(iOS 17.0, visionOS 1.0, *)
    @available(macOS, unavailable)
    @available(watchOS, unavailable)
    @available(tvOS, unavailable)
    @MainActor
    public static func showManageSubscriptions(in scene: UIWindowScene, subscriptionGroupID: String) async throws {
        try StoreKitTestScript.showManageSubscriptions(
            in: ObjectIdentifier(scene), subscriptionGroupID: subscriptionGroupID)
    }
}
