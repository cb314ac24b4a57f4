// The slice of StoreKit 2's `AppTransaction` that Kakin's StoreKit backend uses, as Apple declares it.
// Apple's documentation: https://developer.apple.com/documentation/storekit/apptransaction

/// Information that represents the customer's purchase of the app, cryptographically signed by
/// the App Store.
@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
public struct AppTransaction: Sendable, Hashable, CustomDebugStringConvertible {
    /// The bundle identifier that the app transaction applies to.
    /// https://developer.apple.com/documentation/storekit/apptransaction/bundleid
    public let bundleID: String

    let _appTransactionID: String

    /// The unique identifier of the app download transaction (back-deployed by Apple before
    /// iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4 and visionOS 2.4).
    /// https://developer.apple.com/documentation/storekit/apptransaction/apptransactionid
    public var appTransactionID: String { _appTransactionID }

    /// A textual representation of the app transaction, for debugging.
    public var debugDescription: String { "AppTransaction(\(bundleID), \(_appTransactionID))" }

    /// Gets the App Store-signed app transaction information for the app. Throws if the app
    /// transaction is not available or the user is not authenticated with the App Store (a
    /// `StoreKitError`); getting it may need the network.
    /// https://developer.apple.com/documentation/storekit/apptransaction/shared
    public static var shared: VerificationResult<AppTransaction> {
        get async throws { try StoreKitTestScript.appTransaction() }
    }
}

@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
extension VerificationResult where SignedType == AppTransaction {
    /// The app transaction signed by the App Store, in JWS Compact Serialization format.
    /// https://developer.apple.com/documentation/storekit/verificationresult/jwsrepresentation-6ma59
    public var jwsRepresentation: String { StoreKitTestScript.jws(of: unsafePayloadValue) }
}
