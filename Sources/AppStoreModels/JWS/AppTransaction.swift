public import Foundation

/// The content of a signed app transaction: proof that a customer got the app itself.
///
/// StoreKit 2 returns it from `AppTransaction.shared`, and the App Store Server API from Get App
/// Transaction Info. It has no `signedDate`; ``receiptCreationDate`` plays that role for a verifier.
public struct AppTransaction: Codable, Hashable, Sendable {
    /// The environment the app transaction was signed for.
    public var receiptType: AppStoreEnvironment?
    /// The App Store's numeric ID of the app; absent in the sandbox and in Xcode.
    public var appAppleID: Int64?
    /// The bundle ID of the app.
    public var bundleID: String?
    /// The app version the signature was made for (`CFBundleVersion` on iOS).
    public var applicationVersion: String?
    /// The App Store's ID of the app version the customer has.
    public var versionExternalIdentifier: Int64?
    /// When the App Store created this app transaction; also the moment it signed it.
    @EpochMilliseconds public var receiptCreationDate: Date?
    /// When the customer first got the app.
    @EpochMilliseconds public var originalPurchaseDate: Date?
    /// The app version the customer first got.
    public var originalApplicationVersion: String?
    /// A hash that lets the device confirm the payload was made for it.
    public var deviceVerification: String?
    /// The UUID mixed into ``deviceVerification``.
    public var deviceVerificationNonce: String?
    /// When the customer pre-ordered the app, if they did.
    @EpochMilliseconds public var preorderDate: Date?
    /// The ID of the app download transaction, unique per customer and app family.
    public var appTransactionID: String?
    /// The platform on which the customer first got the app.
    public var originalPlatform: Platform?
    /// When the app asked for this app transaction; written by Xcode's StoreKit testing.
    @EpochMilliseconds public var requestDate: Date?

    /// Creates an app transaction; every field defaults to absent.
    public init(
        receiptType: AppStoreEnvironment? = nil, appAppleID: Int64? = nil, bundleID: String? = nil,
        applicationVersion: String? = nil, versionExternalIdentifier: Int64? = nil,
        receiptCreationDate: Date? = nil, originalPurchaseDate: Date? = nil, originalApplicationVersion: String? = nil,
        deviceVerification: String? = nil, deviceVerificationNonce: String? = nil, preorderDate: Date? = nil,
        appTransactionID: String? = nil, originalPlatform: Platform? = nil, requestDate: Date? = nil
    ) {
        self.receiptType = receiptType
        self.appAppleID = appAppleID
        self.bundleID = bundleID
        self.applicationVersion = applicationVersion
        self.versionExternalIdentifier = versionExternalIdentifier
        self.receiptCreationDate = receiptCreationDate
        self.originalPurchaseDate = originalPurchaseDate
        self.originalApplicationVersion = originalApplicationVersion
        self.deviceVerification = deviceVerification
        self.deviceVerificationNonce = deviceVerificationNonce
        self.preorderDate = preorderDate
        self.appTransactionID = appTransactionID
        self.originalPlatform = originalPlatform
        self.requestDate = requestDate
    }

    enum CodingKeys: String, CodingKey {
        case receiptType
        case appAppleID = "appAppleId"
        case bundleID = "bundleId"
        case applicationVersion
        case versionExternalIdentifier
        case receiptCreationDate
        case originalPurchaseDate
        case originalApplicationVersion
        case deviceVerification
        case deviceVerificationNonce
        case preorderDate
        case appTransactionID = "appTransactionId"
        case originalPlatform
        case requestDate
    }
}

extension AppTransaction: SignedPayload {
    /// ``receiptCreationDate``, which is when the App Store signed the app transaction.
    public var signedPayloadDate: Date? { receiptCreationDate }
    /// ``bundleID``.
    public var signedPayloadBundleID: String? { bundleID }
    /// ``receiptType``.
    public var signedPayloadEnvironment: AppStoreEnvironment? { receiptType }
    /// ``appAppleID``.
    public var signedPayloadAppAppleID: Int64? { appAppleID }
}
