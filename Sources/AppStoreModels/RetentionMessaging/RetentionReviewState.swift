/// Where Apple's review of an uploaded message or image stands: Apple's `messageState` and
/// `imageState`, which share these values.
///
/// Only an approved message (with an approved image, when it has one) is shown to subscribers.
/// In the sandbox environment Apple approves what is uploaded at once.
public struct RetentionReviewState: WireEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Uploaded, not reviewed yet.
    public static let pending = Self(rawValue: "PENDING")
    /// Reviewed and allowed: it can be shown and configured as a default.
    public static let approved = Self(rawValue: "APPROVED")
    /// Reviewed and refused: it is never shown.
    public static let rejected = Self(rawValue: "REJECTED")

    public static let knownValues: [Self] = [.pending, .approved, .rejected]
}
