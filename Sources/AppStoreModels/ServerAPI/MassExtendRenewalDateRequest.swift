/// The body of Extend Subscription Renewal Dates for All Active Subscribers of one product.
public struct MassExtendRenewalDateRequest: Codable, Hashable, Sendable {
    /// How many days to add; Apple allows at most 90.
    public var extendByDays: Int?
    /// Why the renewal dates are extended.
    public var extendReasonCode: ExtendReasonCode?
    /// A unique ID chosen by the developer; it names the job when asking for its status.
    public var requestIdentifier: String?
    /// The storefronts (ISO 3166-1 alpha-3) to cover; every storefront when absent.
    public var storefrontCountryCodes: [String]?
    /// The subscription product whose subscribers get the extension.
    public var productID: String?

    /// Creates a request; every field defaults to absent.
    public init(
        extendByDays: Int? = nil, extendReasonCode: ExtendReasonCode? = nil, requestIdentifier: String? = nil,
        storefrontCountryCodes: [String]? = nil, productID: String? = nil
    ) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
        self.storefrontCountryCodes = storefrontCountryCodes
        self.productID = productID
    }

    enum CodingKeys: String, CodingKey {
        case extendByDays
        case extendReasonCode
        case requestIdentifier
        case storefrontCountryCodes
        case productID = "productId"
    }
}
