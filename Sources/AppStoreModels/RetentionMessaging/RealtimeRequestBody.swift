/// What the App Store POSTs to an app's `Get Retention Message` endpoint: `{"signedPayload": …}`,
/// a JWS whose payload is a ``DecodedRealtimeRequestBody`` (Apple's `RealtimeRequestBody`).
///
/// It is signed like a Server Notification V2 (ES256, an `x5c` chain to Apple Root CA - G3); verify
/// it with `SignedDataVerifier.verifyRealtimeRequest(_:at:)` in AppStoreSecurity before reading it.
public struct RealtimeRequestBody: Codable, Hashable, Sendable {
    /// The JWS compact serialization of the request.
    public var signedPayload: String?

    /// A body carrying `signedPayload`.
    public init(signedPayload: String? = nil) {
        self.signedPayload = signedPayload
    }

    enum CodingKeys: String, CodingKey {
        case signedPayload
    }
}
