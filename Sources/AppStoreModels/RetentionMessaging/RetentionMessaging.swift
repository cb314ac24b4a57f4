/// The limits Apple publishes for the Retention Messaging API, in one place.
///
/// The Retention Messaging API lets an app show a message, a switch-plan suggestion or a
/// promotional offer on the page where a subscriber may cancel. It is served under
/// `/inApps/v1/messaging` on the same hosts as the App Store Server API, with the same bearer
/// tokens and the same `{errorCode, errorMessage}` error bodies, so its endpoints are cases of
/// ``ServerAPIEndpoint`` and its error codes are ``APIErrorCode`` values.
public enum RetentionMessaging {
    /// How long the App Store waits for a `Get Retention Message` endpoint to answer: about 700 ms,
    /// as Apple's documentation says for production and for the sandbox performance test. An answer
    /// later than this is not shown; the product's default message is shown instead.
    public static let realtimeResponseLimit: Duration = .milliseconds(700)
    /// The most characters a message's header may have.
    public static let maximumHeaderLength = 66
    /// The most characters a message's body may have.
    public static let maximumBodyLength = 144
    /// The most characters an image's alternative text may have.
    public static let maximumAltTextLength = 150
    /// The most bullet points a message may have.
    public static let maximumBulletPoints = 5
    /// The most characters a bullet point's text may have.
    public static let maximumBulletPointTextLength = 66
    /// The most images an app may keep uploaded.
    public static let maximumImages = 2000
}
