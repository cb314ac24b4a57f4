import AppStoreModels
import Foundation

/// Any App Store signed payload, read just far enough to tell its kind and its app claims.
///
/// `kakin jws verify` does not know in advance whether a file holds a transaction, renewal info, a
/// notification or an app transaction; this reads the claims wherever each kind keeps them and
/// says which checks Apple's verifier makes for that kind.
struct AnySignedPayload: Decodable, SignedPayload {
    enum Kind: String {
        case transaction, renewalInfo, notification, appTransaction, unknown
    }

    private struct Claims: Decodable {
        var bundleId: String?
        var appAppleId: Int64?
        var environment: AppStoreEnvironment?
        var externalPurchaseId: String?
    }

    private var notificationType: String?
    private var receiptType: AppStoreEnvironment?
    private var transactionId: String?
    private var autoRenewProductId: String?
    private var bundleId: String?
    private var appAppleId: Int64?
    private var environment: AppStoreEnvironment?
    @EpochMilliseconds private var signedDate: Date?
    @EpochMilliseconds private var receiptCreationDate: Date?
    private var data: Claims?
    private var summary: Claims?
    private var externalPurchaseToken: Claims?
    private var appData: Claims?

    var kind: Kind {
        if notificationType != nil { return .notification }
        if receiptType != nil { return .appTransaction }
        if transactionId != nil { return .transaction }
        if autoRenewProductId != nil { return .renewalInfo }
        return .unknown
    }

    /// Notifications keep their claims in `data`, else `summary`, else `externalPurchaseToken`, else `appData`.
    private var nested: Claims? { data ?? summary ?? externalPurchaseToken ?? appData }

    var signedPayloadDate: Date? { signedDate ?? receiptCreationDate }
    var signedPayloadBundleID: String? { bundleId ?? nested?.bundleId }
    var signedPayloadAppAppleID: Int64? { appAppleId ?? nested?.appAppleId }
    var signedPayloadEnvironment: AppStoreEnvironment? {
        if let environment = environment ?? receiptType { return environment }
        if data == nil, summary == nil, let token = externalPurchaseToken {
            return token.externalPurchaseId?.hasPrefix("SANDBOX") == true ? .sandbox : .production
        }
        return nested?.environment
    }
}
