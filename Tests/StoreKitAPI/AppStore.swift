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

@available(macOS 27.3, *)
@available(iOS, unavailable)
@available(watchOS, unavailable)
@available(tvOS, unavailable)
@available(visionOS, unavailable)
extension AppStore {
    /// Presents the manage-subscriptions sheet on a window (macOS 27.3). Throws
    /// `StoreKitError.invalidPresentationContext` when the window is not visible; a customer who
    /// dismisses the sheet is no error.
    /// https://developer.apple.com/documentation/storekit/appstore/showmanagesubscriptions(from:)
    @MainActor
    public static func showManageSubscriptions(from window: NSWindow) async throws {
        try StoreKitTestScript.showManageSubscriptions(in: ObjectIdentifier(window), subscriptionGroupID: nil)
    }

    /// Presents the manage-subscriptions sheet for one subscription group on a window (macOS 27.3).
    /// https://developer.apple.com/documentation/storekit/appstore/showmanagesubscriptions(from:subscriptiongroupid:)
    @MainActor
    public static func showManageSubscriptions(from window: NSWindow, subscriptionGroupID: String) async throws {
        try StoreKitTestScript.showManageSubscriptions(
            in: ObjectIdentifier(window), subscriptionGroupID: subscriptionGroupID)
    }
}

// The offer code redemption sheet. Before the iOS 27 SDK it only presents the sheet (a redeemed
// code arrives through `Transaction.updates`); since, it returns the transaction the redemption made.

/// An option that customizes an offer code redemption (iOS 27). Apple's documentation lists no
/// option yet, so the stand-in declares none.
/// https://developer.apple.com/documentation/storekit/redeemoption
@available(iOS 27.0, macOS 27.0, visionOS 27.0, *)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
public struct RedeemOption: Equatable, Hashable, Sendable {
    let name: String
}

@available(iOS 16.0, visionOS 1.0, *)
@available(macOS, unavailable)
@available(watchOS, unavailable)
@available(tvOS, unavailable)
extension AppStore {
    /// Displays the offer code redemption sheet in a window scene; returns when the sheet closes,
    /// saying nothing of what the customer did. Replaced in iOS 27 by
    /// `presentOfferCodeRedeemSheet(from:options:)`.
    /// https://developer.apple.com/documentation/storekit/appstore/presentoffercoderedeemsheet(in:)
    @available(iOS, introduced: 16.0, deprecated: 27.0)
    @available(visionOS, introduced: 1.0, deprecated: 27.0)
    @MainActor
    public static func presentOfferCodeRedeemSheet(in scene: UIWindowScene) async throws {
        try StoreKitTestScript.presentOfferCodeRedeemSheet(from: ObjectIdentifier(scene), returningTransaction: false)
    }

    /// Presents the offer code redemption sheet from a view controller and returns the transaction
    /// the redemption made. Throws `StoreKitError` when the sheet cannot be presented or the
    /// redemption fails (`userCancelled` when the customer closes it).
    /// https://developer.apple.com/documentation/storekit/appstore/presentoffercoderedeemsheet(from:options:)-89agc
    @available(iOS 27.0, visionOS 27.0, *)
    @MainActor
    public static func presentOfferCodeRedeemSheet(
        from viewController: UIViewController, options: Set<RedeemOption> = []
    ) async throws -> VerificationResult<Transaction> {
        try StoreKitTestScript.redeemedTransaction(from: ObjectIdentifier(viewController))
    }
}

@available(macOS 15.0, *)
@available(iOS, unavailable)
@available(watchOS, unavailable)
@available(tvOS, unavailable)
@available(visionOS, unavailable)
extension AppStore {
    /// Displays the offer code redemption sheet in a view controller (macOS 15); returns when the
    /// sheet closes. Replaced in macOS 27 by `presentOfferCodeRedeemSheet(from:options:)`.
    /// https://developer.apple.com/documentation/storekit/appstore/presentoffercoderedeemsheet(from:)
    @available(macOS, introduced: 15.0, deprecated: 27.0)
    @MainActor
    public static func presentOfferCodeRedeemSheet(from controller: NSViewController) async throws {
        try StoreKitTestScript.presentOfferCodeRedeemSheet(
            from: ObjectIdentifier(controller), returningTransaction: false)
    }

    /// Presents the offer code redemption sheet on a window and returns the transaction the
    /// redemption made (macOS 27).
    /// https://developer.apple.com/documentation/storekit/appstore/presentoffercoderedeemsheet(from:options:)-gj8m
    @available(macOS 27.0, *)
    @MainActor
    public static func presentOfferCodeRedeemSheet(
        from window: NSWindow, options: Set<RedeemOption> = []
    ) async throws -> VerificationResult<Transaction> {
        try StoreKitTestScript.redeemedTransaction(from: ObjectIdentifier(window))
    }
}
