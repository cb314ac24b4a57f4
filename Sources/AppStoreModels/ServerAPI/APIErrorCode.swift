/// The numeric code in an App Store Server API error body.
///
/// The first three digits are the HTTP status that comes with it (``httpStatus``). A few codes say
/// that the same request may succeed later (``isRetryable``): the `…Retryable` not-found codes, which
/// Apple uses while data is still propagating, ``rateLimitExceeded`` and ``generalInternalRetryable``.
/// Codes this version does not know still decode and keep their number.
public struct APIErrorCode: WireEnum {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// 4000000: The request is invalid in a way no more specific code covers.
    public static let generalBadRequest = Self(rawValue: 4000000)
    /// 4000002: The app identifier is invalid.
    public static let invalidAppIdentifier = Self(rawValue: 4000002)
    /// 4000005: The `revision` token is invalid.
    public static let invalidRequestRevision = Self(rawValue: 4000005)
    /// 4000006: The transaction ID is invalid.
    public static let invalidTransactionID = Self(rawValue: 4000006)
    /// 4000008: The original transaction ID is invalid.
    public static let invalidOriginalTransactionID = Self(rawValue: 4000008)
    /// 4000009: `extendByDays` is out of range.
    public static let invalidExtendByDays = Self(rawValue: 4000009)
    /// 4000010: `extendReasonCode` is not a known reason.
    public static let invalidExtendReasonCode = Self(rawValue: 4000010)
    /// 4000011: The request identifier is invalid.
    public static let invalidRequestIdentifier = Self(rawValue: 4000011)
    /// 4000012: The start date is further back than Apple keeps history.
    public static let startDateTooFarInPast = Self(rawValue: 4000012)
    /// 4000013: The start date is after the end date.
    public static let startDateAfterEndDate = Self(rawValue: 4000013)
    /// 4000014: The pagination token is invalid.
    public static let invalidPaginationToken = Self(rawValue: 4000014)
    /// 4000015: The start date is invalid.
    public static let invalidStartDate = Self(rawValue: 4000015)
    /// 4000016: The end date is invalid.
    public static let invalidEndDate = Self(rawValue: 4000016)
    /// 4000017: The pagination token expired; start again from the first page.
    public static let paginationTokenExpired = Self(rawValue: 4000017)
    /// 4000018: The notification type is invalid.
    public static let invalidNotificationType = Self(rawValue: 4000018)
    /// 4000019: More than one filter was given where only one is allowed.
    public static let multipleFiltersSupplied = Self(rawValue: 4000019)
    /// 4000020: The test notification token is invalid.
    public static let invalidTestNotificationToken = Self(rawValue: 4000020)
    /// 4000021: The sort order is invalid.
    public static let invalidSort = Self(rawValue: 4000021)
    /// 4000022: The product type filter is invalid.
    public static let invalidProductType = Self(rawValue: 4000022)
    /// 4000023: The product ID filter is invalid.
    public static let invalidProductID = Self(rawValue: 4000023)
    /// 4000024: The subscription group filter is invalid.
    public static let invalidSubscriptionGroupIdentifier = Self(rawValue: 4000024)
    /// 4000025: The exclude-revoked filter is invalid.
    public static let invalidExcludeRevoked = Self(rawValue: 4000025)
    /// 4000026: The ownership type filter is invalid.
    public static let invalidInAppOwnershipType = Self(rawValue: 4000026)
    /// 4000027: The storefront list is empty; leave it out to mean every storefront.
    public static let invalidEmptyStorefrontCountryCodeList = Self(rawValue: 4000027)
    /// 4000028: A storefront country code is invalid.
    public static let invalidStorefrontCountryCode = Self(rawValue: 4000028)
    /// 4000030: The `revoked` filter is neither `true` nor `false`.
    public static let invalidRevoked = Self(rawValue: 4000030)
    /// 4000031: The subscription status filter is invalid.
    public static let invalidStatus = Self(rawValue: 4000031)
    /// 4000032: `accountTenure` is out of range.
    public static let invalidAccountTenure = Self(rawValue: 4000032)
    /// 4000033: `appAccountToken` is invalid.
    public static let invalidAppAccountToken = Self(rawValue: 4000033)
    /// 4000034: `consumptionStatus` is out of range.
    public static let invalidConsumptionStatus = Self(rawValue: 4000034)
    /// 4000035: `customerConsented` is missing or false.
    public static let invalidCustomerConsented = Self(rawValue: 4000035)
    /// 4000036: `deliveryStatus` is invalid.
    public static let invalidDeliveryStatus = Self(rawValue: 4000036)
    /// 4000037: `lifetimeDollarsPurchased` is out of range.
    public static let invalidLifetimeDollarsPurchased = Self(rawValue: 4000037)
    /// 4000038: `lifetimeDollarsRefunded` is out of range.
    public static let invalidLifetimeDollarsRefunded = Self(rawValue: 4000038)
    /// 4000039: `platform` is out of range.
    public static let invalidPlatform = Self(rawValue: 4000039)
    /// 4000040: `playTime` is out of range.
    public static let invalidPlayTime = Self(rawValue: 4000040)
    /// 4000041: `sampleContentProvided` is invalid.
    public static let invalidSampleContentProvided = Self(rawValue: 4000041)
    /// 4000042: `userStatus` is out of range.
    public static let invalidUserStatus = Self(rawValue: 4000042)
    /// 4000043: The transaction is not for a consumable.
    public static let invalidTransactionNotConsumable = Self(rawValue: 4000043)
    /// 4000047: This endpoint does not support the transaction's product type.
    public static let invalidTransactionTypeNotSupported = Self(rawValue: 4000047)
    /// 4000048: This endpoint does not accept an app transaction ID.
    public static let appTransactionIDNotSupported = Self(rawValue: 4000048)
    /// 4000183: The app account token is not a valid UUID.
    public static let invalidAppAccountTokenUUID = Self(rawValue: 4000183)
    /// 4000185: This endpoint does not accept Family Sharing transactions.
    public static let familyTransactionNotSupported = Self(rawValue: 4000185)
    /// 4000187: The transaction ID is not an original transaction ID.
    public static let transactionIDIsNotOriginalTransactionID = Self(rawValue: 4000187)
    /// 4030004: The subscription cannot have its renewal date extended.
    public static let subscriptionExtensionIneligible = Self(rawValue: 4030004)
    /// 4030005: The subscription has reached the most extensions Apple allows.
    public static let subscriptionMaxExtension = Self(rawValue: 4030005)
    /// 4030007: A family-shared subscription cannot have its renewal date extended.
    public static let familySharedSubscriptionExtensionIneligible = Self(rawValue: 4030007)
    /// 4040001: The App Store account was not found.
    public static let accountNotFound = Self(rawValue: 4040001)
    /// 4040002: The App Store account was not found yet; try again.
    public static let accountNotFoundRetryable = Self(rawValue: 4040002)
    /// 4040003: The app was not found.
    public static let appNotFound = Self(rawValue: 4040003)
    /// 4040004: The app was not found yet; try again.
    public static let appNotFoundRetryable = Self(rawValue: 4040004)
    /// 4040005: The original transaction ID was not found.
    public static let originalTransactionIDNotFound = Self(rawValue: 4040005)
    /// 4040006: The original transaction ID was not found yet; try again.
    public static let originalTransactionIDNotFoundRetryable = Self(rawValue: 4040006)
    /// 4040007: No App Store Server Notifications URL is configured for the app.
    public static let serverNotificationURLNotFound = Self(rawValue: 4040007)
    /// 4040008: The test notification was not found.
    public static let testNotificationNotFound = Self(rawValue: 4040008)
    /// 4040009: The renewal date extension request was not found.
    public static let statusRequestNotFound = Self(rawValue: 4040009)
    /// 4040010: The transaction ID was not found.
    public static let transactionIDNotFound = Self(rawValue: 4040010)
    /// 4040019: The customer has no app transaction for this app.
    public static let appTransactionDoesNotExist = Self(rawValue: 4040019)
    /// 4000161: The uploaded image is not a PNG Apple accepts (Retention Messaging).
    public static let invalidImage = Self(rawValue: 4000161)
    /// 4000162: The message header is longer than 66 characters (Retention Messaging).
    public static let headerTooLong = Self(rawValue: 4000162)
    /// 4000163: The message body is longer than 144 characters (Retention Messaging).
    public static let bodyTooLong = Self(rawValue: 4000163)
    /// 4000164: The locale is invalid (Retention Messaging).
    public static let invalidLocale = Self(rawValue: 4000164)
    /// 4000175: The image's alternative text is longer than 150 characters (Retention Messaging).
    public static let altTextTooLong = Self(rawValue: 4000175)
    /// 4000211: The performance test request is invalid (Retention Messaging).
    public static let invalidPerformanceTestRequest = Self(rawValue: 4000211)
    /// 4000212: The performance test's request ID is invalid (Retention Messaging).
    public static let invalidRequestID = Self(rawValue: 4000212)
    /// 4000213: A performance test is already running for the app (Retention Messaging).
    public static let existingPerformanceTestRun = Self(rawValue: 4000213)
    /// 4000215: The real-time URL is invalid (Retention Messaging).
    public static let invalidRealtimeURL = Self(rawValue: 4000215)
    /// 4000216: The image size is invalid (Retention Messaging).
    public static let invalidImageSize = Self(rawValue: 4000216)
    /// 4000218: The message has more than five bullet points (Retention Messaging).
    public static let tooManyBulletPoints = Self(rawValue: 4000218)
    /// 4000219: A bullet point's text is longer than 66 characters (Retention Messaging).
    public static let bulletPointTextTooLong = Self(rawValue: 4000219)
    /// 4000224: The header is to go above an image, but the message has none (Retention Messaging).
    public static let headerAboveImageRequiresImage = Self(rawValue: 4000224)
    /// 4030014: The app has uploaded as many images as Apple allows (Retention Messaging).
    public static let maximumNumberOfImagesReached = Self(rawValue: 4030014)
    /// 4030016: The app has uploaded as many messages as Apple allows (Retention Messaging).
    public static let maximumNumberOfMessagesReached = Self(rawValue: 4030016)
    /// 4030017: The message is not approved, so it cannot be a default (Retention Messaging).
    public static let messageNotApproved = Self(rawValue: 4030017)
    /// 4030018: The message's image is not approved, so it cannot be a default (Retention Messaging).
    public static let imageNotApproved = Self(rawValue: 4030018)
    /// 4030019: A message shows the image, so it cannot be deleted (Retention Messaging).
    public static let imageInUse = Self(rawValue: 4030019)
    /// 4030026: A production real-time URL needs a passed performance test first (Retention Messaging).
    public static let noPassingPerformanceTest = Self(rawValue: 4030026)
    /// 4040014: No image has this identifier (Retention Messaging).
    public static let imageNotFound = Self(rawValue: 4040014)
    /// 4040015: No message has this identifier (Retention Messaging).
    public static let messageNotFound = Self(rawValue: 4040015)
    /// 4040018: No performance test has this request ID (Retention Messaging).
    public static let performanceTestRunNotFound = Self(rawValue: 4040018)
    /// 4040020: No default message is configured for the product and locale (Retention Messaging).
    public static let defaultMessageNotFound = Self(rawValue: 4040020)
    /// 4040021: No real-time URL is configured in this environment (Retention Messaging).
    public static let realtimeURLNotFound = Self(rawValue: 4040021)
    /// 4090000: An image with this identifier exists already; uploads are not idempotent (Retention Messaging).
    public static let imageAlreadyExists = Self(rawValue: 4090000)
    /// 4090001: A message with this identifier exists already; uploads are not idempotent (Retention Messaging).
    public static let messageAlreadyExists = Self(rawValue: 4090001)
    /// 4290000: Too many requests; slow down and try again later.
    public static let rateLimitExceeded = Self(rawValue: 4290000)
    /// 5000000: Apple's server failed.
    public static let generalInternal = Self(rawValue: 5000000)
    /// 5000001: Apple's server failed; try again.
    public static let generalInternalRetryable = Self(rawValue: 5000001)

    public static let knownValues: [Self] = [
        .generalBadRequest, .invalidAppIdentifier, .invalidRequestRevision, .invalidTransactionID,
        .invalidOriginalTransactionID, .invalidExtendByDays, .invalidExtendReasonCode, .invalidRequestIdentifier,
        .startDateTooFarInPast, .startDateAfterEndDate, .invalidPaginationToken, .invalidStartDate, .invalidEndDate,
        .paginationTokenExpired, .invalidNotificationType, .multipleFiltersSupplied, .invalidTestNotificationToken,
        .invalidSort, .invalidProductType, .invalidProductID, .invalidSubscriptionGroupIdentifier,
        .invalidExcludeRevoked, .invalidInAppOwnershipType, .invalidEmptyStorefrontCountryCodeList,
        .invalidStorefrontCountryCode, .invalidRevoked, .invalidStatus, .invalidAccountTenure,
        .invalidAppAccountToken, .invalidConsumptionStatus, .invalidCustomerConsented, .invalidDeliveryStatus,
        .invalidLifetimeDollarsPurchased, .invalidLifetimeDollarsRefunded, .invalidPlatform, .invalidPlayTime,
        .invalidSampleContentProvided, .invalidUserStatus, .invalidTransactionNotConsumable,
        .invalidTransactionTypeNotSupported, .appTransactionIDNotSupported, .invalidAppAccountTokenUUID,
        .familyTransactionNotSupported, .transactionIDIsNotOriginalTransactionID, .subscriptionExtensionIneligible,
        .subscriptionMaxExtension, .familySharedSubscriptionExtensionIneligible, .accountNotFound,
        .accountNotFoundRetryable, .appNotFound, .appNotFoundRetryable, .originalTransactionIDNotFound,
        .originalTransactionIDNotFoundRetryable, .serverNotificationURLNotFound, .testNotificationNotFound,
        .statusRequestNotFound, .transactionIDNotFound, .appTransactionDoesNotExist, .rateLimitExceeded,
        .generalInternal, .generalInternalRetryable,
        // Retention Messaging API
        .invalidImage, .headerTooLong, .bodyTooLong, .invalidLocale, .altTextTooLong, .invalidPerformanceTestRequest,
        .invalidRequestID, .existingPerformanceTestRun, .invalidRealtimeURL, .invalidImageSize, .tooManyBulletPoints,
        .bulletPointTextTooLong, .headerAboveImageRequiresImage, .maximumNumberOfImagesReached,
        .maximumNumberOfMessagesReached, .messageNotApproved, .imageNotApproved, .imageInUse, .noPassingPerformanceTest,
        .imageNotFound, .messageNotFound, .performanceTestRunNotFound, .defaultMessageNotFound, .realtimeURLNotFound,
        .imageAlreadyExists, .messageAlreadyExists,
    ]

    /// The codes that mean "try the same request again later".
    static let retryableCodes: Set<Self> = [
        .accountNotFoundRetryable, .appNotFoundRetryable, .originalTransactionIDNotFoundRetryable,
        .rateLimitExceeded, .generalInternalRetryable,
    ]

    /// Whether the same request may succeed if sent again later.
    ///
    /// True for the `…Retryable` codes (4040002, 4040004, 4040006), for ``rateLimitExceeded``
    /// (4290000) and for ``generalInternalRetryable`` (5000001); every other code, including
    /// ``generalInternal`` (5000000), means the request itself has to change.
    public var isRetryable: Bool { Self.retryableCodes.contains(self) }

    /// The HTTP status Apple sends with this code: its first three digits, such as 404 for 4040010.
    ///
    /// `nil` when the code does not have the usual seven digits.
    public var httpStatus: Int? {
        (1_000_000...9_999_999).contains(rawValue) ? rawValue / 10_000 : nil
    }
}
