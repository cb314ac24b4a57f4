public import AppStoreModels
public import Foundation

/// One `Get Retention Message` request the sandbox sent when a tester opened the page where they
/// may cancel a subscription: what was asked, what the app's server answered, how long it took,
/// and what the App Store would have shown.
///
/// Read through the control API (`GET /v1/control/retention/requests`) or
/// ``SandboxRetention/requests(bundleID:)``.
public struct RetentionRequestRecord: Codable, Hashable, Sendable {
    /// The request's `requestIdentifier` (a UUID, lowercase).
    public var requestIdentifier: String
    /// The subscription's original transaction ID.
    public var originalTransactionID: String
    /// The subscription's product ID.
    public var productID: String
    /// The locale the request carried.
    public var userLocale: String
    /// The URL it was sent to; `nil` when no real-time URL is configured (nothing was sent).
    public var url: String?
    /// The JWS that was sent as `{"signedPayload": …}`.
    public var signedPayload: String
    /// When it was signed, on the sandbox clock.
    public var signedDate: Date
    /// The HTTP status of the answer; `nil` when none came in time.
    public var status: Int?
    /// The answer's body, when it was a readable `RealtimeResponseBody`.
    public var response: RealtimeResponseBody?
    /// How long the answer took, in milliseconds (up to the deadline when none came).
    public var elapsedMilliseconds: Int64?
    /// Whether a valid answer came within `RetentionMessaging/realtimeResponseLimit`.
    public var answeredInTime: Bool
    /// Why the request failed, in Apple's terms (`TIMED_OUT`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`,
    /// `INVALID_RESPONSE`, `NO_RESPONSE`); `nil` when it succeeded or was not sent.
    public var failure: SendAttemptResult?
    /// What was wrong with the answer, in words; `nil` when nothing was.
    public var problem: String?
    /// The message the subscriber would see: the server's choice when it answered in time and
    /// validly, otherwise the default message for the product and locale, if one is configured.
    public var shownMessageIdentifier: String?
    /// Whether the shown message is the default rather than the server's choice.
    public var shownDefault: Bool

    /// A record from its parts.
    public init(
        requestIdentifier: String, originalTransactionID: String, productID: String, userLocale: String,
        url: String?, signedPayload: String, signedDate: Date, status: Int? = nil,
        response: RealtimeResponseBody? = nil, elapsedMilliseconds: Int64? = nil, answeredInTime: Bool = false,
        failure: SendAttemptResult? = nil, problem: String? = nil, shownMessageIdentifier: String? = nil,
        shownDefault: Bool = false
    ) {
        self.requestIdentifier = requestIdentifier
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.userLocale = userLocale
        self.url = url
        self.signedPayload = signedPayload
        self.signedDate = signedDate
        self.status = status
        self.response = response
        self.elapsedMilliseconds = elapsedMilliseconds
        self.answeredInTime = answeredInTime
        self.failure = failure
        self.problem = problem
        self.shownMessageIdentifier = shownMessageIdentifier
        self.shownDefault = shownDefault
    }

    enum CodingKeys: String, CodingKey {
        case requestIdentifier
        case originalTransactionID = "originalTransactionId"
        case productID = "productId"
        case userLocale
        case url
        case signedPayload
        case signedDate
        case status
        case response
        case elapsedMilliseconds
        case answeredInTime
        case failure
        case problem
        case shownMessageIdentifier
        case shownDefault
    }
}
