public import Foundation

/// The content of an App Store Server Notification V2: what happened, to which app, and when.
///
/// Exactly one of ``data``, ``summary``, ``externalPurchaseToken`` or ``appData`` is present,
/// depending on the notification type. ``SignedPayload`` picks the app and environment from
/// whichever it is.
public struct ResponseBodyV2DecodedPayload: Codable, Hashable, Sendable {
    /// What happened.
    public var notificationType: NotificationTypeV2?
    /// More detail on what happened; absent for many types.
    public var subtype: NotificationSubtype?
    /// A unique ID for the notification; Apple resends a notification with the same ID, so use it to
    /// ignore duplicates.
    public var notificationUUID: String?
    /// The app, transaction and renewal info, for notifications about a purchase or subscription.
    public var data: NotificationData?
    /// The outcome of a mass renewal date extension, for `RENEWAL_EXTENSION` with subtype `SUMMARY`.
    public var summary: Summary?
    /// The external purchase token, for `EXTERNAL_PURCHASE_TOKEN`.
    public var externalPurchaseToken: ExternalPurchaseToken?
    /// The app and app transaction, for `RESCIND_CONSENT`.
    public var appData: AppData?
    /// The version of the notification format, `2.0`.
    public var version: String?
    /// When the App Store signed the notification.
    @EpochMilliseconds public var signedDate: Date?

    /// Creates a notification payload; every field defaults to absent.
    public init(
        notificationType: NotificationTypeV2? = nil, subtype: NotificationSubtype? = nil,
        notificationUUID: String? = nil, data: NotificationData? = nil, summary: Summary? = nil,
        externalPurchaseToken: ExternalPurchaseToken? = nil, appData: AppData? = nil, version: String? = nil,
        signedDate: Date? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.data = data
        self.summary = summary
        self.externalPurchaseToken = externalPurchaseToken
        self.appData = appData
        self.version = version
        self.signedDate = signedDate
    }

    enum CodingKeys: String, CodingKey {
        case notificationType
        case subtype
        case notificationUUID
        case data
        case summary
        case externalPurchaseToken
        case appData
        case version
        case signedDate
    }
}

extension ResponseBodyV2DecodedPayload: SignedPayload {
    /// ``signedDate``.
    public var signedPayloadDate: Date? { signedDate }

    /// The bundle ID from ``data``, else ``summary``, else ``externalPurchaseToken``, else ``appData``.
    public var signedPayloadBundleID: String? {
        if let data { return data.bundleID }
        if let summary { return summary.bundleID }
        if let externalPurchaseToken { return externalPurchaseToken.bundleID }
        return appData?.bundleID
    }

    /// The environment from ``data``, else ``summary``, else derived from the external purchase
    /// token's ID (sandbox when it starts with `SANDBOX`, production otherwise), else ``appData``.
    public var signedPayloadEnvironment: AppStoreEnvironment? {
        if let data { return data.environment }
        if let summary { return summary.environment }
        if let externalPurchaseToken { return externalPurchaseToken.environment }
        return appData?.environment
    }

    /// The app's Apple ID from ``data``, else ``summary``, else ``externalPurchaseToken``, else ``appData``.
    public var signedPayloadAppAppleID: Int64? {
        if let data { return data.appAppleID }
        if let summary { return summary.appAppleID }
        if let externalPurchaseToken { return externalPurchaseToken.appAppleID }
        return appData?.appAppleID
    }
}
