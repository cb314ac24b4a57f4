/// One page of Get Notification History.
public struct NotificationHistoryResponse: Codable, Hashable, Sendable {
    /// The token to pass as the `paginationToken` query parameter to fetch the next page.
    public var paginationToken: String?
    /// Whether more pages follow.
    public var hasMore: Bool?
    /// The notifications on this page.
    public var notificationHistory: [NotificationHistoryResponseItem]?

    /// Creates a page; every field defaults to absent.
    public init(
        paginationToken: String? = nil, hasMore: Bool? = nil,
        notificationHistory: [NotificationHistoryResponseItem]? = nil
    ) {
        self.paginationToken = paginationToken
        self.hasMore = hasMore
        self.notificationHistory = notificationHistory
    }

    enum CodingKeys: String, CodingKey {
        case paginationToken
        case hasMore
        case notificationHistory
    }
}
