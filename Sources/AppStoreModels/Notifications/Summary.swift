/// The outcome of a renewal date extension for many subscribers; in `RENEWAL_EXTENSION` notifications.
public struct Summary: Codable, Hashable, Sendable {
    /// The environment the extension ran in.
    public var environment: AppStoreEnvironment?
    /// The App Store's numeric ID of the app.
    public var appAppleID: Int64?
    /// The bundle ID of the app.
    public var bundleID: String?
    /// The subscription product whose renewal dates were extended.
    public var productID: String?
    /// The ID the developer gave the extension request.
    public var requestIdentifier: String?
    /// The storefronts (ISO 3166-1 alpha-3) the extension covered; all of them when absent.
    public var storefrontCountryCodes: [String]?
    /// How many subscriptions were extended.
    public var succeededCount: Int64?
    /// How many subscriptions could not be extended.
    public var failedCount: Int64?

    /// Creates a summary; every field defaults to absent.
    public init(
        environment: AppStoreEnvironment? = nil, appAppleID: Int64? = nil, bundleID: String? = nil,
        productID: String? = nil, requestIdentifier: String? = nil, storefrontCountryCodes: [String]? = nil,
        succeededCount: Int64? = nil, failedCount: Int64? = nil
    ) {
        self.environment = environment
        self.appAppleID = appAppleID
        self.bundleID = bundleID
        self.productID = productID
        self.requestIdentifier = requestIdentifier
        self.storefrontCountryCodes = storefrontCountryCodes
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }

    enum CodingKeys: String, CodingKey {
        case environment
        case appAppleID = "appAppleId"
        case bundleID = "bundleId"
        case productID = "productId"
        case requestIdentifier
        case storefrontCountryCodes
        case succeededCount
        case failedCount
    }
}
