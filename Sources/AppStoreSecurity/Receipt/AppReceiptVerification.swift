public import AppStoreModels
public import Foundation
public import X509

/// What a successful receipt verification established.
///
/// A value of this type exists only when the signature verified; ``trust`` says how far the
/// certificates could be checked.
public struct AppReceiptVerification: Sendable {
    /// How the signing certificate was trusted.
    public enum Trust: Sendable {
        /// The leaf and intermediate chain to ``root``, one of the caller's trusted roots, at the validation time.
        case certificateChain(root: Certificate)
        /// Xcode's single self-signed certificate, accepted because the caller trusts Xcode's
        /// StoreKit testing. Only the signature is meaningful: anyone can make such a certificate.
        case xcodeSelfSigned
    }

    /// The verified payload.
    public let receipt: AppReceipt
    /// How the signer was trusted.
    public let trust: Trust
    /// The certificate whose key made the signature.
    public let signerCertificate: Certificate
    /// The time at which the certificates were checked.
    public let validationTime: Date
    /// The digest algorithm used for the signature.
    public let digestAlgorithm: CMSAlgorithmIdentifier
    /// Whether the device hash was checked (a device identifier was given) and matched.
    public let deviceHashVerified: Bool

    /// Always `true`: verification throws ``AppStoreSecurityError/Code/badSignature`` otherwise.
    public var signatureVerified: Bool { true }

    /// Whether the certificates were checked up to a trusted root; `false` for Xcode receipts.
    public var chainVerified: Bool {
        if case .certificateChain = trust { return true }
        return false
    }

    /// The trusted root that anchored the chain; `nil` for Xcode receipts.
    public var root: Certificate? {
        if case .certificateChain(let root) = trust { return root }
        return nil
    }
}
