public import Foundation

/// What a verifier needs to know about any signed App Store payload, whatever its kind.
///
/// The verifier checks the certificate chain at ``signedPayloadDate`` (Apple's certificates expire,
/// and a payload stays valid when it was valid at signing) and compares the app and environment
/// with what it was configured to accept.
public protocol SignedPayload: Sendable {
    /// When the App Store signed the payload: `signedDate`, or `receiptCreationDate` for an app transaction.
    var signedPayloadDate: Date? { get }
    /// The bundle ID the payload is for, when its kind carries one.
    var signedPayloadBundleID: String? { get }
    /// The App Store app identifier, when present.
    var signedPayloadAppAppleID: Int64? { get }
    /// The environment the payload was signed in.
    var signedPayloadEnvironment: AppStoreEnvironment? { get }
}
