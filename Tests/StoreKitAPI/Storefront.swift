// The slice of StoreKit 2's `Storefront` that Kakin's StoreKit backend uses, as Apple declares it.
// Apple's documentation: https://developer.apple.com/documentation/storekit/storefront

/// An object that contains the location and unique identifier of an App Store storefront.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public struct Storefront: Identifiable, Sendable, Hashable {
    /// The three-letter code representing the country or region associated with the App Store
    /// storefront (ISO 3166-1 alpha-3).
    /// https://developer.apple.com/documentation/storekit/storefront/countrycode
    public var countryCode: String { code }
    /// A value defined by Apple that uniquely identifies an App Store storefront.
    /// https://developer.apple.com/documentation/storekit/storefront/id
    public var id: String { identifier }

    private let code: String
    private let identifier: String

    // Not Apple's: StoreKit makes storefronts itself; the script makes this stand-in's.
    init(countryCode: String, id: String) {
        code = countryCode
        identifier = id
    }

    /// The storefront for the App Store the person's device is signed in to, or `nil` when it
    /// cannot be read.
    /// https://developer.apple.com/documentation/storekit/storefront/current
    public static var current: Storefront? {
        get async { StoreKitTestScript.currentStorefront() }
    }
}
