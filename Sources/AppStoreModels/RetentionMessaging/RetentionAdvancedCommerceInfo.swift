/// A retention offer or switch plan for an Advanced Commerce subscription, chosen in a real-time
/// answer (Apple's `advancedCommerceInfo`). For any other subscription Apple ignores the answer.
public struct RetentionAdvancedCommerceInfo: Codable, Hashable, Sendable {
    /// The identifier (a UUID) of an approved message.
    public var messageIdentifier: String?
    /// The Advanced Commerce request describing the offer or the plan, as the app's server signed it.
    public var advancedCommerceData: String?

    /// An answer part from its parts.
    public init(messageIdentifier: String? = nil, advancedCommerceData: String? = nil) {
        self.messageIdentifier = messageIdentifier
        self.advancedCommerceData = advancedCommerceData
    }

    enum CodingKeys: String, CodingKey {
        case messageIdentifier
        case advancedCommerceData
    }
}
