public import Foundation

/// Where a transaction stands within a subscription commitment plan.
///
/// A commitment plan binds the customer to a number of billing periods. Kakin decodes it so that
/// newer payloads keep their content, but does not simulate commitment plans.
public struct CommitmentInfo: Codable, Hashable, Sendable {
    /// Which billing period of the commitment this transaction pays for, counting from 1.
    public var billingPeriodNumber: Int?
    /// When the commitment ends.
    @EpochMilliseconds public var commitmentExpiresDate: Date?
    /// The price of the whole commitment in milliunits of the currency.
    public var commitmentPrice: Int64?
    /// How many billing periods the commitment has in all.
    public var totalBillingPeriods: Int?

    /// Creates commitment details; every field is optional, as Apple may leave any out.
    public init(
        billingPeriodNumber: Int? = nil, commitmentExpiresDate: Date? = nil, commitmentPrice: Int64? = nil,
        totalBillingPeriods: Int? = nil
    ) {
        self.billingPeriodNumber = billingPeriodNumber
        self.commitmentExpiresDate = commitmentExpiresDate
        self.commitmentPrice = commitmentPrice
        self.totalBillingPeriods = totalBillingPeriods
    }

    enum CodingKeys: String, CodingKey {
        case billingPeriodNumber
        case commitmentExpiresDate
        case commitmentPrice
        case totalBillingPeriods
    }
}
