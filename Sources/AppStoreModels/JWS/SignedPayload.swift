public import Foundation

/// A payload that the App Store signs as a JWS, seen through the fields a verifier checks.
///
/// Verifying a signed object means checking the signature at the time it was signed, then checking
/// that it belongs to the expected app and environment. Each payload keeps those facts under
/// different keys (an app transaction has `receiptCreationDate` instead of `signedDate`, renewal info
/// has no bundle ID, a notification keeps them in one of four nested objects), so this protocol gives
/// them uniform names. The names start with `signedPayload` so they never clash with the payloads'
/// own properties.
public protocol SignedPayload: Sendable {
    /// When the App Store signed the payload; a verifier checks the certificates at this moment.
    var signedPayloadDate: Date? { get }
    /// The bundle ID of the app the payload belongs to, when the payload names one.
    var signedPayloadBundleID: String? { get }
    /// The environment the payload was signed for.
    var signedPayloadEnvironment: AppStoreEnvironment? { get }
    /// The App Store's numeric ID of the app, when the payload names one.
    var signedPayloadAppAppleID: Int64? { get }
}
