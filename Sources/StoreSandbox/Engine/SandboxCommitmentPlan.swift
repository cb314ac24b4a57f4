import AppStoreModels
public import Foundation

/// A subscription sold on a monthly plan with a 12-month commitment, in one storefront: what the
/// whole commitment costs and what each month is billed.
///
/// Apple sells such a plan alongside a yearly subscription's usual up-front billing: the customer
/// commits to 12 monthly payments, each its own transaction (`billingPlanType` `MONTHLY`) giving
/// one month of access. The catalog makes these from its side file
/// (``CatalogOptions/commitmentPlans``); tests can make them by hand.
public struct SandboxCommitmentPlan: Hashable, Sendable {
    /// The number of monthly payments of a commitment, as Apple sells it.
    public static let standardBillingPeriods = 12

    /// The price of the whole commitment, in milliunits of the storefront's currency
    /// (`commitmentPrice`).
    public var commitmentPriceMilliunits: Int64
    /// What each month is billed, in milliunits of the storefront's currency.
    public var monthlyPriceMilliunits: Int64
    /// How many monthly payments the commitment has (`totalBillingPeriods`).
    public var totalBillingPeriods: Int

    /// Creates a plan. Without `monthlyPriceMilliunits`, each month is billed
    /// ``monthlyPrice(of:periods:minorUnitMilliunits:)`` of the commitment price.
    public init(
        commitmentPriceMilliunits: Int64, monthlyPriceMilliunits: Int64? = nil,
        totalBillingPeriods: Int = standardBillingPeriods
    ) {
        self.commitmentPriceMilliunits = commitmentPriceMilliunits
        self.totalBillingPeriods = max(1, totalBillingPeriods)
        self.monthlyPriceMilliunits =
            monthlyPriceMilliunits
            ?? Self.monthlyPrice(of: commitmentPriceMilliunits, periods: self.totalBillingPeriods)
    }

    /// A month's share of a commitment price: the price divided by the number of payments, rounded
    /// down to a whole minor unit of the currency (`minorUnitMilliunits`: 10 for cents, 1000 for
    /// currencies priced in whole units such as the yen).
    ///
    /// Rounding down keeps the payments from adding up to more than the commitment price the
    /// customer agreed to: 119.99 a year is billed 9.99 a month (119.88 in all).
    public static func monthlyPrice(
        of commitmentMilliunits: Int64, periods: Int = standardBillingPeriods, minorUnitMilliunits: Int64 = 10
    ) -> Int64 {
        let unit = max(1, minorUnitMilliunits)
        return commitmentMilliunits / Int64(max(1, periods)) / unit * unit
    }
}

extension SubscriptionState {
    /// A commitment in progress: which monthly payment was billed last, and the plan's terms as
    /// they were when the commitment began.
    public struct Commitment: Codable, Hashable, Sendable {
        /// When the first billing period began.
        public var startDate: Date
        /// The billing period the latest transaction pays for, from 1 to ``totalBillingPeriods``.
        public var billingPeriodNumber: Int
        /// How many monthly payments the commitment has.
        public var totalBillingPeriods: Int
        /// The price of the whole commitment, in milliunits.
        public var commitmentPriceMilliunits: Int64
        /// What each month is billed, in milliunits.
        public var monthlyPriceMilliunits: Int64

        /// A commitment to `plan` beginning at `startDate`, its first month billed.
        public init(plan: SandboxCommitmentPlan, startDate: Date) {
            self.startDate = startDate
            billingPeriodNumber = 1
            totalBillingPeriods = plan.totalBillingPeriods
            commitmentPriceMilliunits = plan.commitmentPriceMilliunits
            monthlyPriceMilliunits = plan.monthlyPriceMilliunits
        }

        /// Whether payments remain after the current one: the customer cannot stop them.
        public var hasPeriodsLeft: Bool { billingPeriodNumber < totalBillingPeriods }

        /// The end of billing period `number`: `number` calendar months (UTC) after the start, so
        /// that months of different lengths do not drift (a commitment from 31 January has periods
        /// ending 28 or 29 February, 31 March, 30 April, …).
        public func endOfPeriod(_ number: Int) -> Date {
            SubscriptionPeriod(value: number, unit: .month).advance(startDate)
        }

        /// When the commitment ends: the end of its last billing period (`commitmentExpiresDate`).
        public var expiresDate: Date { endOfPeriod(totalBillingPeriods) }
    }
}

extension SandboxTransaction {
    /// Bills billing period `number` of `commitment`: the monthly price, one month of access,
    /// `billingPlanType` `MONTHLY` and the commitment's details.
    mutating func bill(_ commitment: SubscriptionState.Commitment, period number: Int) {
        priceMilliunits = commitment.monthlyPriceMilliunits
        expiresDate = commitment.endOfPeriod(number)
        billingPlanType = .monthly
        commitmentInfo = TransactionCommitmentInfo(
            billingPeriodNumber: number, commitmentExpiresDate: commitment.expiresDate,
            commitmentPrice: commitment.commitmentPriceMilliunits, totalBillingPeriods: commitment.totalBillingPeriods)
    }
}

extension SandboxEngine {
    /// Checks a purchase's billing plan: `MONTHLY` needs an auto-renewable subscription the
    /// catalog sells with a 12-month commitment in the tester's storefront; `BILLED_UPFRONT` or
    /// none is the usual purchase. Returns the plan of a monthly purchase, `nil` otherwise.
    ///
    /// - Throws: ``SandboxError/Code/billingPlanUnavailable`` when the product has no such plan, or
    ///   the plan type is one the sandbox does not know.
    public func checkBillingPlan(_ request: PurchaseRequest) throws(SandboxError) -> SandboxCommitmentPlan? {
        guard let billing = request.billingPlanType, billing != .billedUpfront else { return nil }
        let tester = try tester(request.testerID)
        guard billing == .monthly else {
            throw SandboxError(
                .billingPlanUnavailable,
                "the billing plan \(billing.rawValue) is unknown: use MONTHLY or BILLED_UPFRONT",
                storeKitCode: .paymentInvalid)
        }
        // An unknown product is the purchase's own error to report.
        guard let product = products(request.productID, tester.storefront) else { return nil }
        guard product.type == .autoRenewableSubscription, let plan = commitmentPlans(product.id, tester.storefront)
        else {
            throw SandboxError(
                .billingPlanUnavailable,
                "\(request.productID) is not sold on a monthly plan with a 12-month commitment in \(tester.storefront)",
                storeKitCode: .paymentInvalid)
        }
        return plan
    }

    /// Renews a subscription on a commitment plan when its period ends: the next month of the
    /// commitment, or, once the last month is paid and the customer still renews, month 1 of a
    /// new commitment when the renewing product is still sold with one. Returns false when the
    /// subscription is not on a commitment plan (any more): the usual renewal applies.
    ///
    /// Within a commitment every month is billed, whatever the customer's auto-renewal choice:
    /// turning auto-renewal off only stops the commitment from renewing at its end.
    func renewCommitment(
        _ subscription: inout SubscriptionState, latest: SandboxTransaction, expires: Date, now: Date
    ) throws(SandboxError) -> Bool {
        guard var commitment = subscription.commitment else { return false }
        let tester = try tester(latest.testerID)
        let productID: String
        if commitment.hasPeriodsLeft {
            commitment.billingPeriodNumber += 1
            productID = subscription.productID
        } else if let plan = commitmentPlans(subscription.autoRenewProductID, tester.storefront) {
            commitment = SubscriptionState.Commitment(plan: plan, startDate: expires)
            productID = subscription.autoRenewProductID
        } else {
            subscription.commitment = nil
            return false
        }
        guard let product = products(productID, tester.storefront), product.isAvailable else {
            subscription.commitment = nil
            return false
        }
        let recovered = subscription.billingState != .ok
        var renewal = newTransaction(
            PurchaseRequest(testerID: tester.id, productID: product.id), product: product, tester: tester,
            originalID: subscription.originalTransactionID, originalPurchaseDate: latest.originalPurchaseDate,
            purchaseDate: recovered ? now : expires)
        renewal.reason = .renewal
        renewal.isFinished = false
        renewal.bill(commitment, period: commitment.billingPeriodNumber)
        subscription.productID = product.id
        subscription.commitment = commitment
        subscription.billingState = .ok
        subscription.gracePeriodExpiresDate = nil
        state.subscriptions[subscription.originalTransactionID] = subscription
        _ = append(renewal, event: .didRenew, subtype: recovered ? .billingRecovery : nil)
        return true
    }

    /// Adds a commitment plan's terms to renewal info: the next month is billed while the
    /// commitment lasts (`autoRenewStatus` on, the monthly `renewalPrice`), and `commitmentInfo`
    /// says whether, when and at what price the commitment itself renews.
    func addCommitment(
        of subscription: SubscriptionState, to info: inout JWSRenewalInfoDecodedPayload, storefront: String
    ) {
        guard let commitment = subscription.commitment else { return }
        let nextPlan = commitmentPlans(subscription.autoRenewProductID, storefront)
        if commitment.hasPeriodsLeft {
            info.autoRenewStatus = .on
            info.autoRenewProductID = subscription.productID
            info.renewalPrice = commitment.monthlyPriceMilliunits
            info.renewalBillingPlanType = .monthly
        } else {
            info.renewalBillingPlanType = nextPlan == nil ? .billedUpfront : .monthly
            if let nextPlan { info.renewalPrice = nextPlan.monthlyPriceMilliunits }
        }
        let upFront = products(subscription.autoRenewProductID, storefront)?.priceMilliunits
        info.commitmentInfo = RenewalCommitmentInfo(
            commitmentAutoRenewProductID: subscription.autoRenewProductID,
            commitmentAutoRenewStatus: subscription.autoRenewEnabled ? .on : .off,
            commitmentRenewalBillingPlanType: nextPlan == nil ? .billedUpfront : .monthly,
            commitmentRenewalDate: commitment.expiresDate,
            commitmentRenewalPrice: nextPlan?.commitmentPriceMilliunits ?? upFront)
    }
}
