/// The subscriptions of one subscription group, in Get All Subscription Statuses.
public struct SubscriptionGroupIdentifierItem: Codable, Hashable, Sendable {
    /// The subscription group.
    public var subscriptionGroupIdentifier: String?
    /// The latest state of each subscription the customer has in the group.
    public var lastTransactions: [LastTransactionsItem]?

    /// Creates an item; every field defaults to absent.
    public init(subscriptionGroupIdentifier: String? = nil, lastTransactions: [LastTransactionsItem]? = nil) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }

    enum CodingKeys: String, CodingKey {
        case subscriptionGroupIdentifier
        case lastTransactions
    }
}
