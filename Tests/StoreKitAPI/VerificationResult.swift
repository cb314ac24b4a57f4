// StoreKit 2's `VerificationResult`, as Apple documents it.
// Apple's documentation: https://developer.apple.com/documentation/storekit/verificationresult

/// A type that describes the result of a StoreKit verification. `@frozen` and unconstrained, as
/// Apple declares it; `Sendable` where its value is.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
@frozen public enum VerificationResult<SignedType> {
    /// The associated value failed verification for the provided reason.
    case unverified(SignedType, VerificationResult<SignedType>.VerificationError)
    /// The associated value passed StoreKit automatic verification checks.
    case verified(SignedType)

    /// The verification error.
    /// https://developer.apple.com/documentation/storekit/verificationresult/verificationerror
    public enum VerificationError: Error, Sendable {
        case revokedCertificate
        case invalidCertificateChain
        case invalidDeviceVerification
        case invalidEncoding
        case invalidSignature
        case missingRequiredProperties
    }

    /// The associated value, whether or not it passed verification.
    /// https://developer.apple.com/documentation/storekit/verificationresult/unsafepayloadvalue
    public var unsafePayloadValue: SignedType {
        switch self {
        case .unverified(let value, _), .verified(let value): value
        }
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension VerificationResult: Sendable where SignedType: Sendable {}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension VerificationResult where SignedType == Transaction {
    /// The JSON Web Signature (JWS) representation of the transaction.
    /// https://developer.apple.com/documentation/storekit/verificationresult
    public var jwsRepresentation: String { StoreKitTestScript.jws(of: unsafePayloadValue) }
}
