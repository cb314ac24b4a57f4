/// The app and transaction a notification is about; the `data` object of a notification payload.
///
/// Named `NotificationData` rather than Apple's `Data` so that it does not hide `Foundation.Data`.
public struct NotificationData: Codable, Hashable, Sendable {
    /// The App Store's numeric ID of the app; absent in the sandbox.
    public var appAppleID: Int64?
    /// The bundle ID of the app.
    public var bundleID: String?
    /// The app version (`CFBundleVersion`) the notification concerns.
    public var bundleVersion: String?
    /// The environment the notification comes from.
    public var environment: AppStoreEnvironment?
    /// The transaction, as a JWS whose payload is a ``JWSTransactionDecodedPayload``.
    public var signedTransactionInfo: String?
    /// The renewal info, as a JWS whose payload is a ``JWSRenewalInfoDecodedPayload``; subscriptions only.
    public var signedRenewalInfo: String?
    /// The state of the subscription; subscriptions only.
    public var status: SubscriptionStatus?
    /// Why the customer asked for a refund; `CONSUMPTION_REQUEST` notifications only.
    public var consumptionRequestReason: ConsumptionRequestReason?

    /// Creates notification data; every field defaults to absent.
    public init(
        appAppleID: Int64? = nil, bundleID: String? = nil, bundleVersion: String? = nil,
        environment: AppStoreEnvironment? = nil, signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil, status: SubscriptionStatus? = nil,
        consumptionRequestReason: ConsumptionRequestReason? = nil
    ) {
        self.appAppleID = appAppleID
        self.bundleID = bundleID
        self.bundleVersion = bundleVersion
        self.environment = environment
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
        self.status = status
        self.consumptionRequestReason = consumptionRequestReason
    }

    enum CodingKeys: String, CodingKey {
        case appAppleID = "appAppleId"
        case bundleID = "bundleId"
        case bundleVersion
        case environment
        case signedTransactionInfo
        case signedRenewalInfo
        case status
        case consumptionRequestReason
    }
}
