/// Why a requested product ID came back invalid instead of as a product.
///
/// StoreKit only lists such IDs (`SKProductsResponse.invalidProductIdentifiers`), which leaves
/// developers guessing. The sandbox says which of the usual causes applies. The first group
/// concerns one product; the second (``isAppLevel``) concerns the app or the developer account
/// and makes every ID of the request invalid.
public enum InvalidProductReason: String, Codable, Hashable, Sendable, CaseIterable {
    /// No product in the catalog has this ID (a typo, or a product never registered).
    case unknownProduct
    /// The ID is empty, has characters other than letters, digits, `.`, `_` and `-`, or has an
    /// empty part between dots.
    case malformedIdentifier
    /// The ID does not start with the app's bundle ID, so it belongs to another app.
    case bundlePrefixMismatch
    /// The product is not cleared for sale, which is required even in the sandbox.
    case notClearedForSale
    /// The product is not sold in the requesting storefront.
    case notAvailableInStorefront
    /// The price tier table has no price in the storefront's currency for this product.
    case priceUnavailable
    /// The app has a wildcard App ID (`com.example.*`), which cannot sell in-app purchases.
    case wildcardAppID
    /// The provisioning profile was made before In-App Purchase was enabled for the App ID.
    case provisioningProfileInvalid
    /// The developer account has no Paid Applications agreement in effect.
    case paidAppsAgreementMissing
    /// The app's last binary was rejected, by App Review or by the developer.
    case binaryRejected

    /// Whether the reason concerns the whole app rather than one product.
    public var isAppLevel: Bool {
        switch self {
        case .wildcardAppID, .provisioningProfileInvalid, .paidAppsAgreementMissing, .binaryRejected: true
        default: false
        }
    }

    /// A sentence for a developer: what is wrong and what to check.
    public var message: String {
        switch self {
        case .unknownProduct:
            "No product has this ID in the catalog; check its spelling against the .storekit file."
        case .malformedIdentifier:
            "The product ID is malformed: it must be non-empty, reverse-DNS style (such as"
                + " com.example.app.name), made of letters, digits, '.', '_' and '-'."
        case .bundlePrefixMismatch:
            "The product ID does not start with the app's bundle ID followed by a dot."
        case .notClearedForSale:
            "The product is not cleared for sale; even sandbox purchases need it cleared."
        case .notAvailableInStorefront:
            "The product is not sold in this storefront."
        case .priceUnavailable:
            "The product has no price in this storefront's currency."
        case .wildcardAppID:
            "The app uses a wildcard App ID; in-app purchases need an explicit App ID."
        case .provisioningProfileInvalid:
            "The provisioning profile predates In-App Purchase for this App ID; regenerate it."
        case .paidAppsAgreementMissing:
            "The Paid Applications agreement is not in effect for the developer account."
        case .binaryRejected:
            "The app's binary is in the rejected state; submit a new binary."
        }
    }
}
