/// The shape rules for product IDs and bundle IDs that the catalog and requests share.
///
/// App Store Connect accepts letters, digits, `.`, `_` and `-` in a product ID, and the custom is
/// the app's bundle ID, a dot and a name (`com.example.kakin.removeAd`). An ID without dots is
/// accepted, since Apple accepts it; with dots, no part may be empty.
enum ProductIdentifierRules {
    /// Whether `identifier` is a usable product ID.
    static func isWellFormed(_ identifier: String) -> Bool {
        guard !identifier.isEmpty,
            identifier.unicodeScalars.allSatisfy({ isAllowed($0) })
        else { return false }
        return identifier.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty }
    }

    /// Whether the bundle ID is a wildcard App ID such as `com.example.*`.
    static func isWildcard(_ bundleID: String) -> Bool {
        bundleID.contains("*")
    }

    /// Whether `identifier` starts with `bundleID` and a dot, followed by at least one character.
    static func hasBundlePrefix(_ identifier: String, bundleID: String) -> Bool {
        let prefix = bundleID + "."
        return identifier.count > prefix.count && identifier.hasPrefix(prefix)
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", ".", "_", "-": true
        default: false
        }
    }
}
