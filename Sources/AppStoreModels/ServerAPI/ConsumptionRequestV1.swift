/// The body of the first, deprecated version of Send Consumption Information.
///
/// Every answer is a small integer code chosen from a range (for example ``AccountTenure``); `0`
/// always means the developer does not say. Prefer ``ConsumptionRequest``.
public struct ConsumptionRequestV1: Codable, Hashable, Sendable {
    /// Whether the customer agreed to share this data with Apple.
    public var customerConsented: Bool?
    /// How much of the purchase the customer used.
    public var consumptionStatus: ConsumptionStatus?
    /// Whether the purchase was made on an Apple platform.
    public var platform: Platform?
    /// Whether the app let the customer try the content before buying.
    public var sampleContentProvided: Bool?
    /// Whether the app delivered what was bought, or why not.
    public var deliveryStatus: DeliveryStatus?
    /// The app account token of the customer, or an empty string.
    public var appAccountToken: String?
    /// How long the customer's account has existed.
    public var accountTenure: AccountTenure?
    /// How long the customer has used the app.
    public var playTime: PlayTime?
    /// How much the customer has had refunded in the app, in US dollars.
    public var lifetimeDollarsRefunded: LifetimeDollars?
    /// How much the customer has spent in the app, in US dollars.
    public var lifetimeDollarsPurchased: LifetimeDollars?
    /// The state of the customer's account.
    public var userStatus: UserStatus?
    /// What the developer would like Apple to do with the refund request.
    public var refundPreference: RefundPreference?

    /// Creates a request; every field defaults to absent.
    public init(
        customerConsented: Bool? = nil, consumptionStatus: ConsumptionStatus? = nil, platform: Platform? = nil,
        sampleContentProvided: Bool? = nil, deliveryStatus: DeliveryStatus? = nil, appAccountToken: String? = nil,
        accountTenure: AccountTenure? = nil, playTime: PlayTime? = nil,
        lifetimeDollarsRefunded: LifetimeDollars? = nil, lifetimeDollarsPurchased: LifetimeDollars? = nil,
        userStatus: UserStatus? = nil, refundPreference: RefundPreference? = nil
    ) {
        self.customerConsented = customerConsented
        self.consumptionStatus = consumptionStatus
        self.platform = platform
        self.sampleContentProvided = sampleContentProvided
        self.deliveryStatus = deliveryStatus
        self.appAccountToken = appAccountToken
        self.accountTenure = accountTenure
        self.playTime = playTime
        self.lifetimeDollarsRefunded = lifetimeDollarsRefunded
        self.lifetimeDollarsPurchased = lifetimeDollarsPurchased
        self.userStatus = userStatus
        self.refundPreference = refundPreference
    }

    enum CodingKeys: String, CodingKey {
        case customerConsented
        case consumptionStatus
        case platform
        case sampleContentProvided
        case deliveryStatus
        case appAccountToken
        case accountTenure
        case playTime
        case lifetimeDollarsRefunded
        case lifetimeDollarsPurchased
        case userStatus
        case refundPreference
    }
}
