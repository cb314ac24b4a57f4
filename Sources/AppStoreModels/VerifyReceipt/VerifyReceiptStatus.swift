/// The `status` of a verifyReceipt response: `0` for a valid receipt, otherwise what went wrong.
///
/// verifyReceipt answers HTTP 200 even when it rejects a receipt, so this number is the only
/// outcome. Three groups of statuses need different handling: ``isRetryable`` ones may succeed
/// later unchanged, ``shouldRetryInOtherEnvironment`` ones must go to the other endpoint (always
/// send to production first and fall back to the sandbox on ``sandboxReceiptSentToProduction``),
/// and all others are final.
public struct VerifyReceiptStatus: WireEnum {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// 0: the receipt is valid (even if a subscription in it has expired).
    public static let valid = Self(rawValue: 0)
    /// 21000: the request was not a POST, or its JSON could not be read.
    public static let unreadableRequest = Self(rawValue: 21000)
    /// 21001: a status the App Store no longer sends.
    public static let notSentAnymore = Self(rawValue: 21001)
    /// 21002: `receipt-data` is missing or malformed, or the service had a passing problem.
    public static let malformedReceiptData = Self(rawValue: 21002)
    /// 21003: the receipt could not be authenticated.
    public static let receiptNotAuthenticated = Self(rawValue: 21003)
    /// 21004: the shared secret does not match the app's.
    public static let sharedSecretMismatch = Self(rawValue: 21004)
    /// 21005: the receipt server is temporarily unavailable.
    public static let receiptServerUnavailable = Self(rawValue: 21005)
    /// 21006: the receipt is valid but its subscription expired (iOS 6 style receipts only).
    public static let subscriptionExpired = Self(rawValue: 21006)
    /// 21007: a sandbox receipt was sent to the production endpoint.
    public static let sandboxReceiptSentToProduction = Self(rawValue: 21007)
    /// 21008: a production receipt was sent to the sandbox endpoint.
    public static let productionReceiptSentToSandbox = Self(rawValue: 21008)
    /// 21009: an internal data access error.
    public static let internalDataAccessError = Self(rawValue: 21009)
    /// 21010: the customer's account was not found or was deleted.
    public static let accountNotFound = Self(rawValue: 21010)

    /// 0 and 21000–21010 by name, and the range 21100–21199 of internal data access errors.
    public static let knownValues: [Self] =
        [.valid] + (21000...21010).map(Self.init(rawValue:)) + (21100...21199).map(Self.init(rawValue:))

    /// Whether this status is one of the internal data access errors numbered 21100–21199.
    public var isInternalDataAccessErrorRange: Bool { (21100...21199).contains(rawValue) }

    /// Whether the same request may succeed if sent again later: 21005, 21009 and 21100–21199.
    ///
    /// For 21100–21199 the response's `is-retryable` field, when present, has the final word.
    /// 21002 can also come from a passing problem, but usually means bad input, so it is not
    /// counted as retryable.
    public var isRetryable: Bool {
        self == .receiptServerUnavailable || self == .internalDataAccessError || isInternalDataAccessErrorRange
    }

    /// Whether the receipt belongs to the other environment and must be sent there: 21007 and 21008.
    public var shouldRetryInOtherEnvironment: Bool { environmentToRetry != nil }

    /// The environment whose endpoint should receive the receipt instead: the sandbox for 21007,
    /// production for 21008, otherwise `nil`.
    public var environmentToRetry: AppStoreEnvironment? {
        switch self {
        case .sandboxReceiptSentToProduction: .sandbox
        case .productionReceiptSentToSandbox: .production
        default: nil
        }
    }

    /// A sentence that tells a developer what the status means and what to do.
    public var message: String {
        switch rawValue {
        case 0:
            "The receipt is valid. Subscriptions in it may still have expired; check their dates."
        case 21000:
            "The request was not an HTTP POST, or the App Store could not read its JSON body."
        case 21001:
            "This status is no longer sent by the App Store."
        case 21002:
            "The receipt-data field is missing or malformed, or the service had a temporary problem."
        case 21003:
            "The receipt could not be authenticated; it may have been altered or not come from the App Store."
        case 21004:
            "The shared secret in the password field does not match the one on file for the app."
        case 21005:
            "The receipt server is temporarily unavailable; try again later."
        case 21006:
            "The receipt is valid but its subscription has expired; the receipt is still decoded in the response."
        case 21007:
            "This receipt is from the sandbox but was sent to the production verifyReceipt endpoint; "
                + "send it to the sandbox endpoint instead."
        case 21008:
            "This receipt is from production but was sent to the sandbox verifyReceipt endpoint; "
                + "send it to the production endpoint instead."
        case 21009:
            "An internal data access error occurred at the App Store; try again later."
        case 21010:
            "The customer's App Store account could not be found or has been deleted."
        case 21100...21199:
            "An internal data access error occurred at the App Store; try again later if is-retryable allows it."
        default:
            "The App Store returned status \(rawValue), which this version does not know."
        }
    }
}
