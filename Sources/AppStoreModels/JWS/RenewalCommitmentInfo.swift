public import Foundation

/// What happens to a subscription commitment plan at its next renewal, as told by renewal info.
///
/// The sandbox writes it in the renewal info of monthly plans with a 12-month commitment: whether
/// the commitment renews for another 12 months when its last billing period ends, and when.
public struct RenewalCommitmentInfo: Codable, Hashable, Sendable {
    /// The product the commitment renews into.
    public var commitmentAutoRenewProductID: String?
    /// Whether the commitment renews when it ends (the customer's choice; billing within the
    /// commitment goes on either way).
    public var commitmentAutoRenewStatus: AutoRenewStatus?
    /// How the renewed commitment will be billed.
    public var commitmentRenewalBillingPlanType: RenewalBillingPlanType?
    /// When the commitment renews.
    @EpochMilliseconds public var commitmentRenewalDate: Date?
    /// The price of the renewed commitment in milliunits of the currency.
    public var commitmentRenewalPrice: Int64?

    /// Creates renewal commitment details; every field is optional, as Apple may leave any out.
    public init(
        commitmentAutoRenewProductID: String? = nil, commitmentAutoRenewStatus: AutoRenewStatus? = nil,
        commitmentRenewalBillingPlanType: RenewalBillingPlanType? = nil, commitmentRenewalDate: Date? = nil,
        commitmentRenewalPrice: Int64? = nil
    ) {
        self.commitmentAutoRenewProductID = commitmentAutoRenewProductID
        self.commitmentAutoRenewStatus = commitmentAutoRenewStatus
        self.commitmentRenewalBillingPlanType = commitmentRenewalBillingPlanType
        self.commitmentRenewalDate = commitmentRenewalDate
        self.commitmentRenewalPrice = commitmentRenewalPrice
    }

    enum CodingKeys: String, CodingKey {
        case commitmentAutoRenewProductID = "commitmentAutoRenewProductId"
        case commitmentAutoRenewStatus
        case commitmentRenewalBillingPlanType
        case commitmentRenewalDate
        case commitmentRenewalPrice
    }
}
