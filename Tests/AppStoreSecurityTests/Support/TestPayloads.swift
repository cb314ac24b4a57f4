import AppStoreModels
import Foundation

/// A payload with the app claims of every kind, at the top level or under `data` as notifications
/// carry them: enough to drive the JWS layer independently of the full models.
struct ClaimsPayload: Codable, Hashable, SignedPayload {
    struct Inner: Codable, Hashable {
        var bundleId: String?
        var appAppleId: Int64?
        var environment: AppStoreEnvironment?
    }

    var bundleId: String?
    var appAppleId: Int64?
    var environment: AppStoreEnvironment?
    var productId: String?
    @EpochMilliseconds var signedDate: Date?
    var data: Inner?

    init(
        bundleId: String? = "com.example.kakin", appAppleId: Int64? = nil, environment: AppStoreEnvironment? = .sandbox,
        productId: String? = "com.example.kakin.removeAd", signedDate: Date? = nil
    ) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.productId = productId
        self.signedDate = signedDate
    }

    var signedPayloadDate: Date? { signedDate }
    var signedPayloadBundleID: String? { bundleId ?? data?.bundleId }
    var signedPayloadAppAppleID: Int64? { appAppleId ?? data?.appAppleId }
    var signedPayloadEnvironment: AppStoreEnvironment? { environment ?? data?.environment }
}
