/// The one error type of the Kakin SDK.
///
/// `code` says what happened; ``isRetryable`` says whether trying again later can help (the
/// network, a server that is down) or not (a forged transaction, a product that does not exist).
public struct KakinError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case network, serverRejected, invalidResponse, tamperedResponse, storeFailure, productUnavailable
            case notConfigured, downloadFailed, storage, unsupported, unauthorized, purchasedByAnotherAccount
            case webPurchasesUnavailable, alreadySubscribed
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The store or the server could not be reached.
        public static let network = Code(.network)
        /// The server refused (a verification failure, a conflict, a bad key).
        public static let serverRejected = Code(.serverRejected)
        /// An answer that cannot be read.
        public static let invalidResponse = Code(.invalidResponse)
        /// The server's answer failed its signature or nonce check.
        public static let tamperedResponse = Code(.tamperedResponse)
        /// The store failed the request (StoreKit's error code is in ``KakinError/storeKitCode``).
        public static let storeFailure = Code(.storeFailure)
        /// The product is not for sale.
        public static let productUnavailable = Code(.productUnavailable)
        /// The SDK is missing a setting.
        public static let notConfigured = Code(.notConfigured)
        /// A content download failed (network, hash mismatch, unpacking).
        public static let downloadFailed = Code(.downloadFailed)
        /// Local state could not be read or written.
        public static let storage = Code(.storage)
        /// The store has no such operation on this platform (e.g. an App Store sheet the sandbox
        /// does not have, or one StoreKit does not offer on macOS).
        public static let unsupported = Code(.unsupported)
        /// The purchase server needs a valid customer token for the identified customer a request
        /// names, and has none: the app's token provider failed (``KakinError/serverCode`` is
        /// `nil`), or the server refused the token even after a fresh one was asked for (status
        /// 401, `serverCode` `unauthorized`, and the ``KakinError/cause`` says why:
        /// `customerTokenMissing`, `customerTokenInvalid`, `customerTokenExpired` or
        /// `customerTokenWrongCustomer`). Retryable: a token minted later (the app's backend back,
        /// the user signed in to it again) may pass, so a queued purchase waits instead of being
        /// given up.
        public static let unauthorized = Code(.unauthorized)
        /// The server refused to move a purchase another customer owns to this one (status 409,
        /// cause `purchasedByAnotherAccount`): nothing showed that this device is signed in to the
        /// Apple Account that bought it. Not retryable: the customer restores purchases on a device
        /// signed in to the Apple Account that bought it.
        public static let purchasedByAnotherAccount = Code(.purchasedByAnotherAccount)
        /// The app may not offer web purchases to this customer: the device's App Store storefront
        /// is not one of ``KakinStore/webPurchaseStorefronts`` (or the store cannot say which it
        /// is), checked on the device before anything is sent; or the server has no web checkout
        /// for the app (status 404, ``KakinError/serverCode`` `notConfigured`). Not retryable.
        public static let webPurchasesUnavailable = Code(.webPurchasesUnavailable)
        /// The customer already has an active subscription to the product they asked to buy on
        /// the web (status 409, cause `alreadySubscribed`): the server never sells the same
        /// subscription twice. Not retryable; the app shows what the customer already has.
        public static let alreadySubscribed = Code(.alreadySubscribed)

        /// The code's name, e.g. `network`.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// What happened, for logs and developers.
    public let message: String
    /// StoreKit's `SKError` code, for store failures.
    public let storeKitCode: Int?
    /// Whether the same operation may succeed later.
    public let isRetryable: Bool
    /// The purchase server's own code for a refusal (`verificationFailed`, `conflict`, …).
    public let serverCode: String?
    /// The cause the server gave, e.g. `badSignature` or `untrustedChain` for a verification failure.
    public let cause: String?

    /// Creates an error. Without `isRetryable`, only ``Code/network`` errors are retryable.
    public init(
        _ code: Code, _ message: String, storeKitCode: Int? = nil, isRetryable: Bool? = nil,
        serverCode: String? = nil, cause: String? = nil
    ) {
        self.code = code
        self.message = message
        self.storeKitCode = storeKitCode
        self.isRetryable = isRetryable ?? (code == .network)
        self.serverCode = serverCode
        self.cause = cause
    }

    /// Two errors are equal when their codes are; the message and the other details are ignored.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    /// Hashes the code only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
    /// `code: message`, e.g. for logs.
    public var description: String { "\(code): \(message)" }
}
