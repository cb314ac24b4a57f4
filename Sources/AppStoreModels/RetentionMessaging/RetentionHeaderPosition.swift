/// Where a message's header is drawn (Apple's `headerPosition`, Retention Messaging API 1.4).
public struct RetentionHeaderPosition: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Above the body text (the default when a message has no image).
    public static let aboveBody = Self(rawValue: "ABOVE_BODY")
    /// Above the image; a message with this position needs an image.
    public static let aboveImage = Self(rawValue: "ABOVE_IMAGE")

    public static let knownValues: [Self] = [.aboveBody, .aboveImage]
}
