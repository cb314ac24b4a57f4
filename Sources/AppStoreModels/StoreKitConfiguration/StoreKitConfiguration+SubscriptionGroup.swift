extension StoreKitConfiguration {
    /// A subscription group: subscriptions of which a customer can have only one at a time.
    public struct SubscriptionGroup: Codable, Hashable, Sendable {
        /// The group's ID, which subscriptions repeat in `subscriptionGroupID`.
        public var id: String?
        /// The group's name per locale.
        public var localizations: [Localization]?
        /// The group's reference name.
        public var name: String?
        /// The subscriptions in the group.
        public var subscriptions: [Subscription]?

        /// Creates a group; every field defaults to absent.
        public init(
            id: String? = nil, localizations: [Localization]? = nil, name: String? = nil,
            subscriptions: [Subscription]? = nil
        ) {
            self.id = id
            self.localizations = localizations
            self.name = name
            self.subscriptions = subscriptions
        }

        enum CodingKeys: String, CodingKey {
            case id
            case localizations
            case name
            case subscriptions
        }
    }
}
