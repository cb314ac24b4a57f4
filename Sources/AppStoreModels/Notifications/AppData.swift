/// The app a notification is about, when no transaction is involved; in `RESCIND_CONSENT` notifications.
public struct AppData: Codable, Hashable, Sendable {
    /// The App Store's numeric ID of the app.
    public var appAppleID: Int64?
    /// The bundle ID of the app.
    public var bundleID: String?
    /// The environment the notification comes from.
    public var environment: AppStoreEnvironment?
    /// The customer's app transaction, as a JWS whose payload is an ``AppTransaction``.
    public var signedAppTransactionInfo: String?

    /// Creates app data; every field defaults to absent.
    public init(
        appAppleID: Int64? = nil, bundleID: String? = nil, environment: AppStoreEnvironment? = nil,
        signedAppTransactionInfo: String? = nil
    ) {
        self.appAppleID = appAppleID
        self.bundleID = bundleID
        self.environment = environment
        self.signedAppTransactionInfo = signedAppTransactionInfo
    }

    enum CodingKeys: String, CodingKey {
        case appAppleID = "appAppleId"
        case bundleID = "bundleId"
        case environment
        case signedAppTransactionInfo
    }
}
