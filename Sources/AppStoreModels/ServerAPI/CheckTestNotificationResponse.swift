/// The answer of Get Test Notification Status: the test notification and how its delivery went.
public struct CheckTestNotificationResponse: Codable, Hashable, Sendable {
    /// The test notification, as a JWS whose payload is a ``ResponseBodyV2DecodedPayload``.
    public var signedPayload: String?
    /// Every delivery attempt, oldest first.
    public var sendAttempts: [SendAttemptItem]?
    /// How the first attempt ended; older responses carry this instead of ``sendAttempts``.
    public var firstSendAttemptResult: SendAttemptResult?

    /// Creates a response; every field defaults to absent.
    public init(
        signedPayload: String? = nil, sendAttempts: [SendAttemptItem]? = nil,
        firstSendAttemptResult: SendAttemptResult? = nil
    ) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
        self.firstSendAttemptResult = firstSendAttemptResult
    }

    enum CodingKeys: String, CodingKey {
        case signedPayload
        case sendAttempts
        case firstSendAttemptResult
    }
}
