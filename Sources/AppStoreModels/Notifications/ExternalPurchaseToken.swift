public import Foundation

/// A token for a purchase made outside the App Store; in `EXTERNAL_PURCHASE_TOKEN` notifications.
///
/// It carries no environment. A token from the sandbox has an ID starting with `SANDBOX`, which is
/// how ``environment`` tells them apart.
public struct ExternalPurchaseToken: Codable, Hashable, Sendable {
    /// The token's ID; sandbox tokens start with `SANDBOX`.
    public var externalPurchaseID: String?
    /// When the token was created.
    @EpochMilliseconds public var tokenCreationDate: Date?
    /// The App Store's numeric ID of the app.
    public var appAppleID: Int64?
    /// The bundle ID of the app.
    public var bundleID: String?

    /// Creates a token; every field defaults to absent.
    public init(
        externalPurchaseID: String? = nil, tokenCreationDate: Date? = nil, appAppleID: Int64? = nil,
        bundleID: String? = nil
    ) {
        self.externalPurchaseID = externalPurchaseID
        self.tokenCreationDate = tokenCreationDate
        self.appAppleID = appAppleID
        self.bundleID = bundleID
    }

    enum CodingKeys: String, CodingKey {
        case externalPurchaseID = "externalPurchaseId"
        case tokenCreationDate
        case appAppleID = "appAppleId"
        case bundleID = "bundleId"
    }

    /// The environment the token comes from: sandbox when its ID starts with `SANDBOX`, otherwise
    /// production.
    public var environment: AppStoreEnvironment {
        externalPurchaseID?.hasPrefix("SANDBOX") == true ? .sandbox : .production
    }
}
