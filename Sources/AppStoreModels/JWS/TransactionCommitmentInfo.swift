public import Foundation

/// Where a transaction stands within a subscription commitment plan (Apple's
/// `TransactionCommitmentInfo`).
///
/// A commitment plan binds the customer to a number of billing periods, such as 12 monthly
/// payments for a yearly subscription. Each payment is its own transaction, and this says which one
/// it is. The sandbox writes it on the transactions of monthly plans with a 12-month commitment.
public struct TransactionCommitmentInfo: Codable, Hashable, Sendable {
    /// Which billing period of the commitment this transaction pays for, counting from 1 (1 to 12
    /// for a 12-month commitment).
    public var billingPeriodNumber: Int?
    /// When the commitment ends: the end of its last billing period.
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

/// The earlier name of ``TransactionCommitmentInfo``, kept so that code written against it builds.
public typealias CommitmentInfo = TransactionCommitmentInfo
