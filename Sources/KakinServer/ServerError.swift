/// The one error type of KakinServer: a code, a message, the HTTP status it answers with, and
/// whether retrying can help.
public struct ServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidConfiguration, invalidRequest, unauthorized, unknownApp, verificationFailed
            case receiptRejected, appleUnavailable, notEntitled, notFound, conflict, insufficientBalance
            case storageUnavailable
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The server's configuration cannot be used.
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// The request is malformed: bad JSON, a missing field, a value out of range, a body too large.
        public static let invalidRequest = Code(.invalidRequest)
        /// A missing or wrong key.
        public static let unauthorized = Code(.unauthorized)
        /// No app is configured with this bundle ID.
        public static let unknownApp = Code(.unknownApp)
        /// A signature, chain, bundle ID or environment check failed.
        public static let verificationFailed = Code(.verificationFailed)
        /// Apple's verifyReceipt refused the receipt (its status code says why).
        public static let receiptRejected = Code(.receiptRejected)
        /// Apple could not be reached or answered with a temporary error: retry later.
        public static let appleUnavailable = Code(.appleUnavailable)
        /// The customer does not own what they asked for.
        public static let notEntitled = Code(.notEntitled)
        /// Nothing has this identifier.
        public static let notFound = Code(.notFound)
        /// The request contradicts what is recorded (a transaction owned by another customer).
        public static let conflict = Code(.conflict)
        /// Not enough currency to spend.
        public static let insufficientBalance = Code(.insufficientBalance)
        /// The database could not be reached.
        public static let storageUnavailable = Code(.storageUnavailable)

        public var description: String { base.rawValue }
    }

    public let code: Code
    public let message: String
    /// For receipt rejections: Apple's status code.
    public let appleStatus: Int?

    public init(_ code: Code, _ message: String, appleStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.appleStatus = appleStatus
    }

    /// Whether the same request may succeed later.
    public var isRetryable: Bool { code == .appleUnavailable || code == .storageUnavailable }

    /// The HTTP status the server answers with.
    public var httpStatus: Int {
        switch code {
        case .invalidRequest, .invalidConfiguration: 400
        case .unauthorized: 401
        case .notEntitled: 403
        case .unknownApp, .notFound: 404
        case .conflict: 409
        case .verificationFailed, .receiptRejected, .insufficientBalance: 422
        case .appleUnavailable, .storageUnavailable: 503
        default: 500
        }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
    public var description: String { "\(code): \(message)" }
}
