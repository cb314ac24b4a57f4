/// The body Apple POSTs to the app's server for an App Store Server Notification V2.
public struct ResponseBodyV2: Codable, Hashable, Sendable {
    /// The notification as a JWS whose payload is a ``ResponseBodyV2DecodedPayload``.
    public var signedPayload: String?

    /// Creates a notification body.
    public init(signedPayload: String? = nil) {
        self.signedPayload = signedPayload
    }

    enum CodingKeys: String, CodingKey {
        case signedPayload
    }
}
