// StoreKit 2's own errors, as Apple declares them, so that the backend's mapping of each one is
// compiled and tested on Linux.
// Apple's documentation: https://developer.apple.com/documentation/storekit/storekiterror
public import Foundation

/// Generic StoreKit errors: thrown by `Product.products(for:)`, `purchase(options:)`,
/// `AppStore.sync()` and the sheets, besides the errors particular to each.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public enum StoreKitError: Error {
    /// An unknown error occurred; trying again later usually works.
    /// https://developer.apple.com/documentation/storekit/storekiterror/unknown
    case unknown
    /// The user did not complete an interaction StoreKit needed (a purchase sheet, a sign-in).
    /// https://developer.apple.com/documentation/storekit/storekiterror/usercancelled
    case userCancelled
    /// A network error occurred while talking to the App Store.
    /// https://developer.apple.com/documentation/storekit/storekiterror/networkerror(_:)
    case networkError(URLError)
    /// A system error occurred.
    /// https://developer.apple.com/documentation/storekit/storekiterror/systemerror(_:)
    case systemError(any Error)
    /// The function isn't available in the current storefront.
    /// https://developer.apple.com/documentation/storekit/storekiterror/notavailableinstorefront
    case notAvailableInStorefront
    /// The app doesn't have the entitlement the functionality needs.
    /// https://developer.apple.com/documentation/storekit/storekiterror/notentitled
    @available(iOS 15.4, macOS 12.3, tvOS 15.4, watchOS 8.5, visionOS 1.0, *)
    case notEntitled
    /// The operation doesn't support this product.
    /// https://developer.apple.com/documentation/storekit/storekiterror/unsupported
    @available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *)
    case unsupported
    /// StoreKit's interface cannot be presented from the current context (a window that is not
    /// visible, a view controller not in a window). New in the iOS 27 SDK.
    /// https://developer.apple.com/documentation/storekit/storekiterror/invalidpresentationcontext
    @available(iOS 27.0, macOS 27.0, tvOS 27.0, watchOS 27.0, visionOS 27.0, *)
    case invalidPresentationContext
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKitError: Sendable {}

@available(iOS 15.4, macOS 12.3, tvOS 15.4, watchOS 8.5, visionOS 1.0, *)
extension StoreKitError: LocalizedError {
    /// A description of the error (the case's name, in this stand-in).
    public var errorDescription: String? { "\(self)" }
}
