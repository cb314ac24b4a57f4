/// What an uploaded image is for (Apple's `imageSize`, Retention Messaging API 1.4): the `imageSize`
/// query parameter of Upload Image, and a field of each Get Image List item.
public struct RetentionImageSize: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A message's main image (3840 × 2160 pixels, PNG, no transparency).
    public static let fullSize = Self(rawValue: "FULL_SIZE")
    /// A bullet point's icon.
    public static let bulletPoint = Self(rawValue: "BULLET_POINT")

    public static let knownValues: [Self] = [.fullSize, .bulletPoint]
}
