public import AppStoreModels
public import AppStoreSecurity
public import AppStoreTesting
import Crypto
public import Foundation

/// Signs what the sandbox hands out, exactly as the App Store does: JWS with a three-certificate
/// `x5c` chain for transactions, renewal info, app transactions and notifications, and PKCS#7 app
/// receipts, all with the sandbox's own certificate authority and environment `Sandbox`.
///
/// Anything it signs verifies with `SignedDataVerifier` (or Apple's own verifier) given
/// ``authority``'s root.
public struct SandboxSigner: Sendable {
    /// The authority whose leaf signs.
    public let authority: SandboxCertificateAuthority
    /// The app's bundle ID.
    public let bundleID: String
    /// The app's App Store identifier.
    public let appAppleID: Int64
    /// The app version written into receipts and app transactions.
    public let applicationVersion: String
    private let jwsSigner: JWSSigner
    private let receiptSigner: AppReceiptSigner

    /// Creates a signer for one app.
    public init(
        authority: SandboxCertificateAuthority, bundleID: String, appAppleID: Int64, applicationVersion: String = "1"
    ) {
        self.authority = authority
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.applicationVersion = applicationVersion
        jwsSigner = JWSSigner(identity: authority.signingIdentity)
        receiptSigner = AppReceiptSigner(identity: authority.signingIdentity)
    }

    /// The same signer for the same app, signing with `authority`'s leaf (after a rotation).
    public func replacingAuthority(_ authority: SandboxCertificateAuthority) -> SandboxSigner {
        SandboxSigner(
            authority: authority, bundleID: bundleID, appAppleID: appAppleID, applicationVersion: applicationVersion)
    }

    /// A verifier that accepts exactly what this signer signs (the sandbox root, this app, Sandbox).
    public func makeVerifier(now: @escaping @Sendable () -> Date = { Date() }) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            rootCertificates: [authority.root], bundleID: bundleID, appAppleID: appAppleID, environment: .sandbox,
            now: now)
    }

    /// `signedTransactionInfo` for a transaction, signed at `date`.
    public func signTransaction(_ transaction: SandboxTransaction, at date: Date) throws -> String {
        try jwsSigner.sign(transaction.payload(bundleID: bundleID, signedDate: date))
    }

    /// `signedRenewalInfo`; `signedDate` and `environment` are set here.
    public func signRenewalInfo(_ renewalInfo: JWSRenewalInfoDecodedPayload, at date: Date) throws -> String {
        var renewalInfo = renewalInfo
        renewalInfo.signedDate = date
        renewalInfo.environment = .sandbox
        return try jwsSigner.sign(renewalInfo)
    }

    /// A notification's `signedPayload`; `signedDate` and `version` are set here.
    public func signNotification(_ notification: ResponseBodyV2DecodedPayload, at date: Date) throws -> String {
        var notification = notification
        notification.signedDate = date
        notification.version = notification.version ?? "2.0"
        return try jwsSigner.sign(notification)
    }

    /// A `Get Retention Message` request's `signedPayload`, signed as notifications are;
    /// `signedDate`, `environment` and `appAppleId` are set here.
    public func signRealtimeRequest(_ request: DecodedRealtimeRequestBody, at date: Date) throws -> String {
        var request = request
        request.signedDate = date
        request.environment = .sandbox
        request.appAppleID = appAppleID
        return try jwsSigner.sign(request)
    }

    /// `AppTransaction` for a tester's download of the app.
    public func signAppTransaction(
        appTransactionID: String, originalPurchaseDate: Date, deviceVerificationNonce: UUID? = nil,
        deviceIdentifier: UUID? = nil, at date: Date
    ) throws -> String {
        var transaction = AppTransaction(
            receiptType: .sandbox, appAppleID: appAppleID, bundleID: bundleID, applicationVersion: applicationVersion,
            receiptCreationDate: date, originalPurchaseDate: originalPurchaseDate,
            originalApplicationVersion: applicationVersion, appTransactionID: appTransactionID,
            originalPlatform: .iOS)
        if let deviceVerificationNonce, let deviceIdentifier {
            transaction.deviceVerificationNonce = deviceVerificationNonce.uuidString.lowercased()
            transaction.deviceVerification = Self.deviceVerification(
                nonce: deviceVerificationNonce, device: deviceIdentifier)
        }
        return try jwsSigner.sign(transaction)
    }

    /// The app receipt as the App Store builds it: the app's fields and one in-app record per
    /// non-consumable, subscription transaction (renewals included) and unfinished consumable.
    ///
    /// - Parameters:
    ///   - transactions: the tester's transactions.
    ///   - deviceIdentifier: the device's `identifierForVendor`, for the SHA-1 hash.
    ///   - opaqueValue: the receipt's opaque value; injected, so receipts are reproducible.
    public func appReceipt(
        transactions: [SandboxTransaction], originalPurchaseDate: Date, deviceIdentifier: UUID,
        opaqueValue: Data, at date: Date
    ) throws -> [UInt8] {
        let records =
            transactions
            .filter { $0.productType != .consumable || !$0.isFinished }
            .sorted { ($0.purchaseDate, $0.id) < ($1.purchaseDate, $1.id) }
            .map(\.receiptRecord)
        let receipt = AppReceipt(
            receiptType: .productionSandbox, appItemID: 0, bundleID: bundleID, applicationVersion: applicationVersion,
            opaqueValue: opaqueValue, creationDate: date, inAppPurchases: records,
            originalPurchaseDate: originalPurchaseDate, originalApplicationVersion: applicationVersion)
        return try receiptSigner.sign(receipt, deviceIdentifier: AppReceipt.deviceIdentifier(from: deviceIdentifier))
    }

    /// StoreKit 2's `deviceVerification`: base64 of SHA-384 over the lowercased nonce and device IDs.
    public static func deviceVerification(nonce: UUID, device: UUID) -> String {
        let text = nonce.uuidString.lowercased() + device.uuidString.lowercased()
        return Data(SHA384.hash(data: Data(text.utf8))).base64EncodedString()
    }
}
