public import AppStoreModels
public import Foundation

/// Any App Store signed payload, read just far enough to tell its kind and its app claims.
///
/// Use it to verify a JWS without knowing in advance whether it holds a transaction, renewal info,
/// a notification or an app transaction (as `kakin jws verify` does), or to verify first and decode
/// the full model only when it is needed: reading these few claims costs less than half of decoding
/// a whole transaction. ``checks`` says which claims Apple's verifier compares for the kind found.
public struct SignedClaims: Decodable, Sendable, SignedPayload {
    /// The kind of payload, recognised by its distinguishing keys.
    public enum Kind: String, Sendable {
        /// A transaction, a subscription's renewal info, a server notification, an app transaction, or a
        /// payload with none of their distinguishing keys.
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

    /// The kind of payload.
    public var kind: Kind {
        if notificationType != nil { return .notification }
        if receiptType != nil { return .appTransaction }
        if transactionId != nil { return .transaction }
        if autoRenewProductId != nil { return .renewalInfo }
        return .unknown
    }

    /// Notifications keep their claims in `data`, else `summary`, else `externalPurchaseToken`, else `appData`.
    private var nested: Claims? { data ?? summary ?? externalPurchaseToken ?? appData }

    /// The claims Apple's verifier compares for this kind of payload.
    public var checks: SignedDataVerifier.ClaimChecks {
        switch kind {
        case .transaction: [.bundleID, .environment]
        case .renewalInfo: [.environment]
        case .notification, .appTransaction, .unknown: .all
        }
    }

    public var signedPayloadDate: Date? { signedDate ?? receiptCreationDate }
    public var signedPayloadBundleID: String? { bundleId ?? nested?.bundleId }
    public var signedPayloadAppAppleID: Int64? { appAppleId ?? nested?.appAppleId }
    public var signedPayloadEnvironment: AppStoreEnvironment? {
        if let environment = environment ?? receiptType { return environment }
        if data == nil, summary == nil, let token = externalPurchaseToken {
            return token.externalPurchaseId?.hasPrefix("SANDBOX") == true ? .sandbox : .production
        }
        return nested?.environment
    }
}
