import KakinLedger
public import AppStoreSecurity
import Hummingbird
import NIOCore

/// The one error type of KakinServer: a code, a message, the HTTP status it answers with, and
/// whether retrying can help.
///
/// Every failure a route can meet ends up here, so the answer a client gets is always typed:
/// `{"error": {"code", "message", "retryable", "cause"?, "appleStatus"?}}`. A mistake of the
/// client (a bad body, a wrong key, a forged signature) is never retryable; only an unreachable
/// database or Apple is.
public struct ServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidConfiguration, invalidRequest, unauthorized, unknownApp, verificationFailed
            case receiptRejected, appleUnavailable, notEntitled, notFound, conflict, insufficientBalance
            case storageUnavailable, payloadTooLarge, methodNotAllowed, notConfigured, internalError
            case tooManyAttempts, forbidden, rateLimited, linkExpired, paymentDeclined
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The server's configuration cannot be used.
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// The request is malformed: bad JSON, a missing field, a value out of range.
        public static let invalidRequest = Code(.invalidRequest)
        /// A missing or wrong key.
        public static let unauthorized = Code(.unauthorized)
        /// No app is configured with this bundle ID.
        public static let unknownApp = Code(.unknownApp)
        /// A signature, chain, bundle ID or environment check failed; ``ServerError/cause`` says which.
        public static let verificationFailed = Code(.verificationFailed)
        /// Apple's verifyReceipt refused the receipt (its status code says why).
        public static let receiptRejected = Code(.receiptRejected)
        /// Apple could not be reached or answered with a temporary error: retry later.
        public static let appleUnavailable = Code(.appleUnavailable)
        /// The customer does not own what they asked for.
        public static let notEntitled = Code(.notEntitled)
        /// Nothing has this identifier.
        public static let notFound = Code(.notFound)
        /// The request contradicts what is recorded (a transaction owned by another customer, an
        /// idempotency key reused for another operation, a content version uploaded with other bytes).
        public static let conflict = Code(.conflict)
        /// Not enough currency to spend.
        public static let insufficientBalance = Code(.insufficientBalance)
        /// The database could not be reached: retry later.
        public static let storageUnavailable = Code(.storageUnavailable)
        /// The body is larger than the server accepts.
        public static let payloadTooLarge = Code(.payloadTooLarge)
        /// The path exists, but not with this method.
        public static let methodNotAllowed = Code(.methodNotAllowed)
        /// The feature asked for is not configured on this server (no catalog, no App Store Server API key).
        public static let notConfigured = Code(.notConfigured)
        /// A defect of the server itself; reported, never retried blindly.
        public static let internalError = Code(.internalError)
        /// Too many wrong secrets from this address (or against this account): wait for
        /// ``ServerError/retryAfterSeconds`` before trying again.
        public static let tooManyAttempts = Code(.tooManyAttempts)
        /// The caller is known, but what it asks is not its to ask: the secret key is needed, or
        /// the app's policy refuses it (``ServerError/cause`` says which). Asking again changes nothing.
        public static let forbidden = Code(.forbidden)
        /// Too many requests from this client address in a short time: wait for
        /// ``ServerError/retryAfterSeconds`` before trying again.
        public static let rateLimited = Code(.rateLimited)
        /// A signed link (the web checkout's) is past its lifetime: ask for a new one.
        public static let linkExpired = Code(.linkExpired)
        /// The payment was refused (a declined card): ``ServerError/cause`` carries the payment
        /// provider's reason; another card may succeed.
        public static let paymentDeclined = Code(.paymentDeclined)

        public var description: String { base.rawValue }
    }

    /// What went wrong, as a code a client can switch on.
    public let code: Code
    /// What went wrong, in a sentence for people (logs, the dashboard); not meant to be parsed.
    public let message: String
    /// For receipt rejections: Apple's status code.
    public let appleStatus: Int?
    /// For verification failures: the verifier's own code (`badSignature`, `untrustedChain`,
    /// `certificateExpired`, `wrongBundleID`, …), so a client can tell a forgery from a misconfiguration.
    public let cause: String?
    /// How long to wait before trying again, when the server knows (`Retry-After`).
    public let retryAfterSeconds: Int?
    /// The ledger's own code when the failure is a `LedgerStoreError`, kept typed so that the
    /// server tells a full disk from other refusals by the code, not by the text of `cause`.
    var ledgerCode: LedgerStoreError.Code?

    /// Creates an error from its code and message, with the details that apply to it.
    public init(
        _ code: Code, _ message: String, appleStatus: Int? = nil, cause: String? = nil, retryAfterSeconds: Int? = nil
    ) {
        self.code = code
        self.message = message
        self.appleStatus = appleStatus
        self.cause = cause
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// Too many wrong secrets: the caller must wait `seconds` (429 with `Retry-After`).
    public static func tooManyAttempts(retryAfter seconds: Int) -> ServerError {
        ServerError(
            .tooManyAttempts, "too many failed sign-ins from this address or for this account; wait \(seconds) s",
            retryAfterSeconds: seconds)
    }

    /// A verification failure carrying the verifier's code as its cause. The one retryable
    /// failure (no usable OCSP answer while revocation is required) is a 503 `appleUnavailable`:
    /// the same upload may be accepted once Apple's responder answers.
    public init(verification error: AppStoreSecurityError, context: String? = nil) {
        let text = context.map { "\($0): \(error)" } ?? "\(error)"
        self.init(error.isRetryable ? .appleUnavailable : .verificationFailed, text, cause: "\(error.code)")
    }

    /// Whether the same request may succeed later.
    public var isRetryable: Bool {
        code == .appleUnavailable || code == .storageUnavailable || code == .tooManyAttempts || code == .rateLimited
    }

    /// The HTTP status the server answers with.
    public var httpStatus: Int {
        switch code {
        case .invalidRequest: 400
        case .unauthorized: 401
        case .notEntitled, .forbidden: 403
        case .unknownApp, .notFound, .notConfigured: 404
        case .methodNotAllowed: 405
        case .linkExpired: 410
        case .paymentDeclined: 402
        case .tooManyAttempts, .rateLimited: 429
        case .conflict: 409
        case .payloadTooLarge: 413
        case .verificationFailed, .receiptRejected, .insufficientBalance: 422
        case .appleUnavailable, .storageUnavailable: 503
        default: 500
        }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
    public var description: String { "\(code): \(message)" }
}

extension ServerError {
    /// The codes of the HTTP statuses the framework answers with by itself.
    private static let codes: [Int: Code] = [
        400: .invalidRequest, 401: .unauthorized, 404: .notFound, 405: .methodNotAllowed, 413: .payloadTooLarge,
        415: .invalidRequest,
    ]

    /// The server error for any failure: typed errors keep their meaning, the framework's HTTP
    /// errors their status, storage errors map to their status (a reused key or a changed content
    /// version is a conflict, a bad argument a bad request, an unreachable database a 503), and
    /// anything else is an internal error.
    public init(_ error: any Error) {
        switch error {
        case let error as ServerError:
            self = error
        case let error as LedgerStoreError:
            switch error.code {
            case .invalidArgument: self.init(.invalidRequest, error.message, cause: error.cause)
            case .idempotencyKeyReused, .contentVersionConflict, .inUse:
                self.init(.conflict, error.message, cause: "\(error.code)")
            case .unavailable, .inconsistentState, .diskFull:
                self.init(.storageUnavailable, error.message, cause: "\(error.code)")
            default: self.init(.internalError, "\(error)")
            }
            ledgerCode = error.code
        case let error as AppStoreSecurityError:
            self.init(verification: error)
        case let error as any HTTPResponseError where Self.codes[error.status.code] != nil:
            // The framework's own answers (no such route, a body too large) keep their status.
            let message = (error as? HTTPError)?.body ?? error.status.reasonPhrase
            self.init(Self.codes[error.status.code]!, message)
        default:
            // A database driver's error is the ledger's error it stands for; a failed socket or
            // file is transient.
            if let ledger = LedgerStoreError(driverError: error) {
                self.init(ledger)
            } else if error is IOError || error is ChannelError {
                self.init(.storageUnavailable, "the database failed: \(error)")
            } else {
                self.init(.internalError, "\(error)")
            }
        }
    }
}
