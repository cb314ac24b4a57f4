public import Foundation

/// The body of Get Notification History: which past notifications to list.
///
/// Give either ``notificationType`` (optionally with ``notificationSubtype``) or ``transactionID``,
/// not both; Apple rejects a request with both.
public struct NotificationHistoryRequest: Codable, Hashable, Sendable {
    /// The earliest notification to include; Apple keeps about 180 days of history.
    @EpochMilliseconds public var startDate: Date?
    /// The end of the range, exclusive.
    @EpochMilliseconds public var endDate: Date?
    /// Only notifications of this type.
    public var notificationType: NotificationTypeV2?
    /// Only notifications with this subtype; needs ``notificationType``.
    public var notificationSubtype: NotificationSubtype?
    /// Only notifications about the customer who made this transaction.
    public var transactionID: String?
    /// Only notifications that never reached the server.
    public var onlyFailures: Bool?

    /// Creates a request; every field defaults to absent.
    public init(
        startDate: Date? = nil, endDate: Date? = nil, notificationType: NotificationTypeV2? = nil,
        notificationSubtype: NotificationSubtype? = nil, transactionID: String? = nil, onlyFailures: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionID = transactionID
        self.onlyFailures = onlyFailures
    }

    enum CodingKeys: String, CodingKey {
        case startDate
        case endDate
        case notificationType
        case notificationSubtype
        case transactionID = "transactionId"
        case onlyFailures
    }
}
