/// The one error type of AppStoreSecurity.
///
/// Every failure has a ``code`` that a program can switch on, a ``reason`` a developer can read, and,
/// where it makes sense, what was ``expected`` and what was ``found``. Two errors compare equal when
/// their codes are equal, so tests and callers can write `#expect(throws: AppStoreSecurityError(.badSignature))`.
///
/// Almost none of these failures goes away by retrying: a forged signature, a revoked certificate
/// or a wrong bundle ID is permanent. The one exception is ``Code/revocationUnavailable`` (no
/// usable answer from an OCSP responder while revocation checks are required); ``isRetryable``
/// says which is which, so that callers never mix up network trouble with bad data.
public struct AppStoreSecurityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable, machine-readable value.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case malformedInput
            case badSignature
            case untrustedChain
            case invalidChainLength
            case certificateExpired
            case certificateNotYetValid
            case missingMarkerOID
            case wrongAlgorithm
            case wrongBundleID
            case wrongAppAppleID
            case wrongEnvironment
            case deviceHashMismatch
            case invalidToken
            case tokenExpired
            case unknownKey
            case invalidConfiguration
            case certificateRevoked
            case revocationUnavailable
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The input is not what it claims to be: not three base64url segments, not JSON, not DER,
        /// a required field missing, no `x5c` header.
        public static let malformedInput = Code(.malformedInput)
        /// The signature does not match the signed bytes and the signer's public key.
        public static let badSignature = Code(.badSignature)
        /// The certificates do not chain to one of the trusted roots.
        public static let untrustedChain = Code(.untrustedChain)
        /// The `x5c` chain does not have exactly the three certificates Apple sends.
        public static let invalidChainLength = Code(.invalidChainLength)
        /// A certificate in the chain had expired at the validation time.
        public static let certificateExpired = Code(.certificateExpired)
        /// A certificate in the chain was not yet valid at the validation time.
        public static let certificateNotYetValid = Code(.certificateNotYetValid)
        /// The leaf lacks 1.2.840.113635.100.6.11.1 or the intermediate lacks 1.2.840.113635.100.6.2.1.
        public static let missingMarkerOID = Code(.missingMarkerOID)
        /// The header names an algorithm other than ES256 (`none`, HS256, RS256, …), or the key does not fit it.
        public static let wrongAlgorithm = Code(.wrongAlgorithm)
        /// The payload is for another app (bundle ID).
        public static let wrongBundleID = Code(.wrongBundleID)
        /// The payload is for another app (App Store app identifier).
        public static let wrongAppAppleID = Code(.wrongAppAppleID)
        /// The payload is for another environment (Sandbox, Production, Xcode).
        public static let wrongEnvironment = Code(.wrongEnvironment)
        /// An app receipt's SHA-1 hash does not match this device, opaque value and bundle ID.
        public static let deviceHashMismatch = Code(.deviceHashMismatch)
        /// An App Store Server API bearer token is not acceptable (audience, issuer, bundle, lifetime).
        public static let invalidToken = Code(.invalidToken)
        /// An App Store Server API bearer token has expired or was issued in the future.
        public static let tokenExpired = Code(.tokenExpired)
        /// A bearer token names a key ID that is not registered.
        public static let unknownKey = Code(.unknownKey)
        /// The verifier itself was configured inconsistently (for example Production without an app ID).
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// The leaf or the intermediate has been revoked: its issuer's OCSP responder says so in a
        /// signed, current answer. Permanent.
        public static let certificateRevoked = Code(.certificateRevoked)
        /// Revocation is required and no usable OCSP answer could be had: the responder did not
        /// answer, or answered something that does not verify, is out of date, or says "unknown".
        /// The only retryable code: the same data may be accepted once the responder answers.
        public static let revocationUnavailable = Code(.revocationUnavailable)

        /// The code's name, as printed by `kakin jws verify`.
        public var description: String { base.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence saying what went wrong, for a developer.
    public let reason: String
    /// What the verifier required, when there is a single expected value.
    public let expected: String?
    /// What the verifier found instead.
    public let found: String?

    /// Creates an error.
    public init(_ code: Code, _ reason: String = "", expected: String? = nil, found: String? = nil) {
        self.code = code
        self.reason = reason
        self.expected = expected
        self.found = found
    }

    /// `true` only for ``Code/revocationUnavailable``: every other failure is a property of the
    /// data, not of the moment.
    public var isRetryable: Bool { code == .revocationUnavailable }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// One line: the code, the reason, and the expected and found values when known.
    public var description: String {
        var text = "\(code)"
        if !reason.isEmpty { text += ": \(reason)" }
        if let expected {
            text += " (expected \(expected)" + (found.map { ", found \($0)" } ?? "") + ")"
        } else if let found {
            text += " (found \(found))"
        }
        return text
    }
}
