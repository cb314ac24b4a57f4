/// An endpoint of the App Store Server API, with the request limit Apple publishes for it.
///
/// Apple limits each endpoint per app, in requests a second, and enforces the limits over an hour:
/// an app may send an endpoint `perSecond × 3600` requests an hour, and the requests past that are
/// answered 429 with ``APIErrorCode/rateLimitExceeded`` and a `Retry-After` header holding the UNIX
/// time, in milliseconds, from which it may send again. The sandbox environment's limits are a tenth
/// of production's. Apple may change them at any time; these are the published figures.
public enum ServerAPIEndpoint: String, Sendable, Hashable, CaseIterable, Codable {
    /// `GET /inApps/v1/transactions/{transactionId}`: Get Transaction Info.
    case getTransactionInfo
    /// `GET /inApps/v2/history/{transactionId}`: Get Transaction History.
    case getTransactionHistory
    /// `GET /inApps/v1/history/{transactionId}`: Get Transaction History V1.
    case getTransactionHistoryV1
    /// `GET /inApps/v1/subscriptions/{transactionId}`: Get All Subscription Statuses.
    case getAllSubscriptionStatuses
    /// `GET /inApps/v2/refund/lookup/{transactionId}`: Get Refund History.
    case getRefundHistory
    /// `GET /inApps/v1/transactions/appTransactions/{transactionId}`: Get App Transaction Info.
    case getAppTransactionInfo
    /// `GET /inApps/v1/lookup/{orderId}`: Look Up Order ID.
    case lookUpOrderID
    /// `PUT /inApps/v2/transactions/consumption/{transactionId}`: Send Consumption Information.
    case sendConsumptionInformation
    /// `PUT /inApps/v1/transactions/consumption/{transactionId}`: Send Consumption Information V1.
    case sendConsumptionInformationV1
    /// `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`: Set App Account Token.
    case setAppAccountToken
    /// `POST /inApps/v1/transactions/{transactionId}/finish`: Finish Transaction.
    case finishTransaction
    /// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`: Extend a Subscription Renewal Date.
    case extendSubscriptionRenewalDate
    /// `POST /inApps/v1/subscriptions/extend/mass`: Extend Subscription Renewal Dates for All Active Subscribers.
    case extendRenewalDatesForAllActiveSubscribers
    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`: Get Status of Subscription Renewal Date Extensions.
    case getStatusOfRenewalDateExtensions
    /// `POST /inApps/v1/notifications/history`: Get Notification History.
    case getNotificationHistory
    /// `POST /inApps/v1/notifications/test`: Request a Test Notification.
    case requestTestNotification
    /// `GET /inApps/v1/notifications/test/{testNotificationToken}`: Get Test Notification Status.
    case getTestNotificationStatus

    // The Retention Messaging API: same hosts, keys and error bodies, under `/inApps/v1/messaging`.

    /// `PUT /inApps/v1/messaging/image/{imageIdentifier}`: Upload Image.
    case uploadImage
    /// `DELETE /inApps/v1/messaging/image/{imageIdentifier}`: Delete Image.
    case deleteImage
    /// `GET /inApps/v1/messaging/image/list`: Get Image List.
    case getImageList
    /// `PUT /inApps/v1/messaging/message/{messageIdentifier}`: Upload Message.
    case uploadMessage
    /// `DELETE /inApps/v1/messaging/message/{messageIdentifier}`: Delete Message.
    case deleteMessage
    /// `GET /inApps/v1/messaging/message/list`: Get Message List.
    case getMessageList
    /// `PUT /inApps/v1/messaging/default/{productId}/{locale}`: Configure Default Message.
    case configureDefaultMessage
    /// `GET /inApps/v1/messaging/default/{productId}/{locale}`: Get Default Message.
    case getDefaultMessage
    /// `DELETE /inApps/v1/messaging/default/{productId}/{locale}`: Delete Default Message.
    case deleteDefaultMessage
    /// `PUT /inApps/v1/messaging/realtime/url`: Configure Realtime URL.
    case configureRealtimeURL
    /// `GET /inApps/v1/messaging/realtime/url`: Get Realtime URL.
    case getRealtimeURL
    /// `DELETE /inApps/v1/messaging/realtime/url`: Delete Realtime URL.
    case deleteRealtimeURL
    /// `POST /inApps/v1/messaging/performanceTest`: Initiate Performance Test.
    case initiatePerformanceTest
    /// `GET /inApps/v1/messaging/performanceTest/result/{requestId}`: Get Performance Test Results.
    case getPerformanceTestResults

    /// Apple's production limit in requests a second; `nil` where Apple publishes none.
    public var productionRequestsPerSecond: Int? {
        switch self {
        case .getTransactionInfo, .getTransactionHistory, .getTransactionHistoryV1, .getAllSubscriptionStatuses,
            .getAppTransactionInfo, .sendConsumptionInformation, .sendConsumptionInformationV1, .finishTransaction,
            .getNotificationHistory:
            50
        case .extendSubscriptionRenewalDate, .setAppAccountToken: 20
        case .lookUpOrderID, .getRefundHistory: 10
        case .extendRenewalDatesForAllActiveSubscribers, .requestTestNotification, .getTestNotificationStatus: 1
        case .configureDefaultMessage: 10
        case .uploadImage, .deleteImage, .getImageList, .uploadMessage, .deleteMessage, .getMessageList,
            .getDefaultMessage, .deleteDefaultMessage, .configureRealtimeURL, .getRealtimeURL, .deleteRealtimeURL,
            .initiatePerformanceTest, .getPerformanceTestResults:
            1
        case .getStatusOfRenewalDateExtensions: nil
        }
    }

    /// Apple's limit for an hour in `environment` (production's per-second figure over an hour; a
    /// tenth of it in the sandbox environment); `nil` where Apple publishes none.
    public func requestsPerHour(in environment: AppStoreEnvironment) -> Int? {
        productionRequestsPerSecond.map { environment == .production ? $0 * 3600 : $0 * 360 }
    }
}
