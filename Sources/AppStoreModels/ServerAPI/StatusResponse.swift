/// The answer of Get All Subscription Statuses: every subscription of a customer, by group.
public struct StatusResponse: Codable, Hashable, Sendable {
    /// The environment the subscriptions come from.
    public var environment: AppStoreEnvironment?
    /// The bundle ID of the app.
    public var bundleID: String?
    /// The App Store's numeric ID of the app.
    public var appAppleID: Int64?
    /// The subscriptions, one entry per subscription group.
    public var data: [SubscriptionGroupIdentifierItem]?

    /// Creates a response; every field defaults to absent.
    public init(
        environment: AppStoreEnvironment? = nil, bundleID: String? = nil, appAppleID: Int64? = nil,
        data: [SubscriptionGroupIdentifierItem]? = nil
    ) {
        self.environment = environment
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.data = data
    }

    enum CodingKeys: String, CodingKey {
        case environment
        case bundleID = "bundleId"
        case appAppleID = "appAppleId"
        case data
    }
}
