/// What an app's `Get Retention Message` endpoint answers, with status 200 (Apple's
/// `RealtimeResponseBody`): exactly one of a message, a switch-plan suggestion, a promotional offer,
/// or an Advanced Commerce offer.
///
/// Whatever it names must be approved; an answer that names nothing, names more than one thing, or
/// comes later than ``RetentionMessaging/realtimeResponseLimit`` makes the App Store show the
/// product's default message instead.
public struct RealtimeResponseBody: Codable, Hashable, Sendable {
    /// A text message, with or without an image.
    public var message: RetentionMessageChoice?
    /// A switch-plan suggestion.
    public var alternateProduct: AlternateProduct?
    /// A promotional offer.
    public var promotionalOffer: RetentionPromotionalOffer?
    /// An offer or plan for an Advanced Commerce subscription.
    public var advancedCommerceInfo: RetentionAdvancedCommerceInfo?

    /// An answer from its parts; set exactly one.
    public init(
        message: RetentionMessageChoice? = nil, alternateProduct: AlternateProduct? = nil,
        promotionalOffer: RetentionPromotionalOffer? = nil, advancedCommerceInfo: RetentionAdvancedCommerceInfo? = nil
    ) {
        self.message = message
        self.alternateProduct = alternateProduct
        self.promotionalOffer = promotionalOffer
        self.advancedCommerceInfo = advancedCommerceInfo
    }

    /// An answer showing the message `messageIdentifier`.
    public static func message(_ messageIdentifier: String) -> Self {
        Self(message: RetentionMessageChoice(messageIdentifier: messageIdentifier))
    }

    /// How many of the four choices are set: a valid answer has exactly one.
    public var choiceCount: Int {
        [message != nil, alternateProduct != nil, promotionalOffer != nil, advancedCommerceInfo != nil]
            .filter { $0 }.count
    }

    /// The identifier of the message the answer shows, whichever choice it is.
    public var chosenMessageIdentifier: String? {
        message?.messageIdentifier ?? alternateProduct?.messageIdentifier ?? promotionalOffer?.messageIdentifier
            ?? advancedCommerceInfo?.messageIdentifier
    }

    enum CodingKeys: String, CodingKey {
        case message
        case alternateProduct
        case promotionalOffer
        case advancedCommerceInfo
    }
}
