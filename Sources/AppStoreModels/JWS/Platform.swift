/// The platform on which the customer first got the app, as in an app transaction's `originalPlatform`.
public struct Platform: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// iPhone and iPad.
    public static let iOS = Self(rawValue: "iOS")
    /// Mac.
    public static let macOS = Self(rawValue: "macOS")
    /// Apple TV.
    public static let tvOS = Self(rawValue: "tvOS")
    /// Apple Vision Pro.
    public static let visionOS = Self(rawValue: "visionOS")

    public static let knownValues: [Self] = [.iOS, .macOS, .tvOS, .visionOS]
}
