public import Foundation

/// The answer of Extend a Subscription Renewal Date.
public struct ExtendRenewalDateResponse: Codable, Hashable, Sendable {
    /// The ID of the first purchase of the subscription.
    public var originalTransactionID: String?
    /// The billing period the extension applies to.
    public var webOrderLineItemID: String?
    /// Whether the renewal date was extended.
    public var success: Bool?
    /// The new renewal date.
    @EpochMilliseconds public var effectiveDate: Date?

    /// Creates a response; every field defaults to absent.
    public init(
        originalTransactionID: String? = nil, webOrderLineItemID: String? = nil, success: Bool? = nil,
        effectiveDate: Date? = nil
    ) {
        self.originalTransactionID = originalTransactionID
        self.webOrderLineItemID = webOrderLineItemID
        self.success = success
        self.effectiveDate = effectiveDate
    }

    enum CodingKeys: String, CodingKey {
        case originalTransactionID = "originalTransactionId"
        case webOrderLineItemID = "webOrderLineItemId"
        case success
        case effectiveDate
    }
}
