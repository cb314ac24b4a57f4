/// The body of Send Consumption Information (version 2): what the app knows about a purchase whose
/// refund the customer asked for, so that Apple can decide on the refund.
public struct ConsumptionRequest: Codable, Hashable, Sendable {
    /// Whether the customer agreed to share this data with Apple; Apple requires `true`.
    public var customerConsented: Bool?
    /// Whether the app let the customer try the content before buying.
    public var sampleContentProvided: Bool?
    /// Whether the app delivered what was bought, or why not.
    public var deliveryStatus: DeliveryStatus?
    /// How much of the purchase the customer used, in milliunits of a percent: `50000` is 50 %.
    public var consumptionPercentage: Int?
    /// What the developer would like Apple to do with the refund request.
    public var refundPreference: RefundPreference?

    /// Creates a request; every field defaults to absent.
    public init(
        customerConsented: Bool? = nil, sampleContentProvided: Bool? = nil, deliveryStatus: DeliveryStatus? = nil,
        consumptionPercentage: Int? = nil, refundPreference: RefundPreference? = nil
    ) {
        self.customerConsented = customerConsented
        self.sampleContentProvided = sampleContentProvided
        self.deliveryStatus = deliveryStatus
        self.consumptionPercentage = consumptionPercentage
        self.refundPreference = refundPreference
    }

    enum CodingKeys: String, CodingKey {
        case customerConsented
        case sampleContentProvided
        case deliveryStatus
        case consumptionPercentage
        case refundPreference
    }
}

extension ConsumptionRequest {
    /// Whether the app delivered the purchase, or why not.
    public struct DeliveryStatus: WireEnum {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Delivered and working.
        public static let delivered = Self(rawValue: "DELIVERED")
        /// Not delivered because of a quality problem.
        public static let undeliveredQualityIssue = Self(rawValue: "UNDELIVERED_QUALITY_ISSUE")
        /// The wrong item was delivered.
        public static let undeliveredWrongItem = Self(rawValue: "UNDELIVERED_WRONG_ITEM")
        /// Not delivered because the developer's server was down.
        public static let undeliveredServerOutage = Self(rawValue: "UNDELIVERED_SERVER_OUTAGE")
        /// Not delivered for another reason.
        public static let undeliveredOther = Self(rawValue: "UNDELIVERED_OTHER")

        public static let knownValues: [Self] = [
            .delivered, .undeliveredQualityIssue, .undeliveredWrongItem, .undeliveredServerOutage, .undeliveredOther,
        ]
    }

    /// What the developer would like Apple to do with a refund request.
    public struct RefundPreference: WireEnum {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Refuse the refund.
        public static let decline = Self(rawValue: "DECLINE")
        /// Refund the whole price.
        public static let grantFull = Self(rawValue: "GRANT_FULL")
        /// Refund the unused part of the price.
        public static let grantProrated = Self(rawValue: "GRANT_PRORATED")

        public static let knownValues: [Self] = [.decline, .grantFull, .grantProrated]
    }
}
