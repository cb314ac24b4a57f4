public import AppStoreModels
public import Foundation

/// What customers, parents and the App Store do after a purchase: refund requests and their
/// outcome, price increases and consent, a parent's withdrawn consent.
extension SandboxEngine {
    // MARK: - Refund requests

    /// The customer asks for a refund (`Transaction.beginRefundRequest`). The App Store decides
    /// later: ``refund(_:reason:percentage:)`` grants it (REFUND), ``declineRefund(_:)`` declines it
    /// (REFUND_DECLINED). For consumables and subscriptions the developer is asked for consumption
    /// information at once (CONSUMPTION_REQUEST).
    ///
    /// - Throws: ``SandboxError/Code/invalidRequest`` for a transaction refunded already or with a
    ///   request pending (StoreKit's `duplicateRequest`).
    public func requestRefund(_ transactionID: String, testerID: String) throws(SandboxError) {
        try checkSimulatedError(.refundRequest)
        guard let transaction = state.transactions[transactionID], transaction.testerID == testerID else {
            throw SandboxError(.unknownTransaction, "tester \(testerID) has no transaction \(transactionID)")
        }
        guard !transaction.isRevoked else {
            throw SandboxError(.invalidRequest, "\(transactionID) is refunded already")
        }
        guard state.refundRequests[transactionID] == nil else {
            throw SandboxError(.invalidRequest, "a refund of \(transactionID) was requested already (duplicateRequest)")
        }
        state.refundRequests[transactionID] = clock.now()
        if transaction.productType == .consumable || transaction.productType == .autoRenewableSubscription {
            record(.consumptionRequest, nil, transaction)
        }
        try save()
    }

    /// Whether a refund of the transaction was requested and not decided yet.
    public func hasPendingRefundRequest(_ transactionID: String) -> Bool {
        state.refundRequests[transactionID] != nil
    }

    /// The App Store declines a refund: the transaction stays as it is and REFUND_DECLINED is sent.
    public func declineRefund(_ transactionID: String) throws(SandboxError) {
        let transaction = try transaction(transactionID)
        guard !transaction.isRevoked else {
            throw SandboxError(.invalidRequest, "\(transactionID) is refunded already: its refund cannot be declined")
        }
        state.refundRequests[transactionID] = nil
        record(.refundDeclined, nil, transaction)
        try save()
    }

    /// The App Store reverses a refund it granted (after a dispute): the transaction is reinstated,
    /// its revocation cleared, it entitles again, reaches the device as an update, and
    /// REFUND_REVERSED is sent.
    @discardableResult
    public func reverseRefund(_ transactionID: String) throws(SandboxError) -> SandboxTransaction {
        var transaction = try transaction(transactionID)
        guard transaction.isRevoked else {
            throw SandboxError(.invalidRequest, "\(transactionID) was not refunded: there is nothing to reverse")
        }
        transaction.revocationDate = nil
        transaction.revocationReason = nil
        transaction.revocationType = nil
        transaction.revocationPercentage = nil
        state.transactions[transactionID] = transaction
        noteUpdate(transaction)
        record(.refundReversed, nil, transaction)
        try save()
        return transaction
    }

    // MARK: - Price increases

    /// Announces a price increase of a subscription's next renewals to `priceMilliunits`.
    ///
    /// An increase that needs consent sends PRICE_INCREASE / PENDING and shows
    /// `priceIncreaseStatus` 0 in the renewal info until ``consentToPriceIncrease(originalTransactionID:)``;
    /// if the customer has not agreed by the renewal date, the subscription expires (EXPIRED /
    /// PRICE_INCREASE, expiration intent 3). One that needs no consent sends PRICE_INCREASE /
    /// ACCEPTED at once. Either way the renewal info's `renewalPrice` is the new price, and renewals
    /// charge it from the first one after the announcement.
    public func increasePrice(
        originalTransactionID: String, to priceMilliunits: Int64, requiresConsent: Bool = true
    ) throws(SandboxError) {
        guard var subscription = state.subscriptions[originalTransactionID],
            let latest = latestTransaction(of: originalTransactionID)
        else { throw SandboxError(.unknownTransaction, "no subscription has original ID \(originalTransactionID)") }
        guard priceMilliunits > 0 else {
            throw SandboxError(.invalidRequest, "the new price must be above 0 milliunits, not \(priceMilliunits)")
        }
        guard try status(originalTransactionID: originalTransactionID) != .expired, !latest.isRevoked else {
            throw SandboxError(.ineligible, "\(originalTransactionID) has expired: its price cannot increase")
        }
        subscription.priceIncrease = SubscriptionState.PriceIncrease(
            productID: subscription.autoRenewProductID, priceMilliunits: priceMilliunits,
            requiresConsent: requiresConsent, consented: !requiresConsent, announcedDate: clock.now())
        state.subscriptions[originalTransactionID] = subscription
        record(.priceIncrease, requiresConsent ? .pending : .accepted, latest)
        try save()
    }

    /// The customer agrees to a pending price increase: PRICE_INCREASE / ACCEPTED, and the next
    /// renewal charges the new price.
    public func consentToPriceIncrease(originalTransactionID: String) throws(SandboxError) {
        guard var subscription = state.subscriptions[originalTransactionID],
            let latest = latestTransaction(of: originalTransactionID)
        else { throw SandboxError(.unknownTransaction, "no subscription has original ID \(originalTransactionID)") }
        guard var increase = subscription.priceIncrease, !increase.consented else {
            throw SandboxError(.invalidRequest, "\(originalTransactionID) has no price increase waiting for consent")
        }
        increase.consented = true
        subscription.priceIncrease = increase
        state.subscriptions[originalTransactionID] = subscription
        record(.priceIncrease, .accepted, latest)
        try save()
    }

    // MARK: - Parental consent

    /// A parent or guardian withdraws consent for the tester (a child) to use the app: the App
    /// Store sends RESCIND_CONSENT, whose `appData` carries the tester's signed app transaction, and
    /// the app must stop serving that customer until consent is given again. Apple revokes no
    /// purchase for it; the tester is marked (``SandboxTester/consentRescindedDate``) so a test
    /// can check what its app did.
    @discardableResult
    public func rescindConsent(of testerID: String) throws(SandboxError) -> SandboxTester {
        var tester = try tester(testerID)
        let now = clock.now()
        tester.consentRescindedDate = now
        state.testers[testerID] = tester
        _ = appDownload(of: testerID)
        state.events.append(
            SandboxEvent(notificationType: .rescindConsent, transactionID: "", testerID: testerID, date: now))
        try save()
        return tester
    }

    /// Consent is given again: the mark set by ``rescindConsent(of:)`` is cleared.
    @discardableResult
    public func restoreConsent(of testerID: String) throws(SandboxError) -> SandboxTester {
        var tester = try tester(testerID)
        tester.consentRescindedDate = nil
        state.testers[testerID] = tester
        try save()
        return tester
    }

    // MARK: - Clock

    /// Moves the sandbox clock forward by `seconds` and brings every subscription up to it.
    ///
    /// - Throws: ``SandboxError/Code/invalidRequest`` for a negative or non-finite interval: the
    ///   sandbox's time never runs backwards.
    @discardableResult
    public func advanceClock(by seconds: TimeInterval) throws(SandboxError) -> [SandboxEvent] {
        guard seconds.isFinite, seconds >= 0 else {
            throw SandboxError(
                .invalidRequest, "the clock only moves forward: the interval must be 0 or more seconds, not \(seconds)")
        }
        clock.advance(by: seconds)
        return try processRenewals()
    }
}

/// One subscription's status as the device sees it (`Product.SubscriptionInfo.Status`).
public struct SandboxSubscriptionStatus: Hashable, Sendable {
    /// Subscribed, expired, in billing retry, in grace period or revoked.
    public var state: SubscriptionStatus
    /// The subscription's latest transaction.
    public var transaction: SandboxTransaction
    /// The renewal info the App Store signs for it.
    public var renewalInfo: JWSRenewalInfoDecodedPayload
}

extension SandboxEngine {
    /// The tester's subscriptions in a group, with their state and renewal info
    /// (`Product.SubscriptionInfo.status`).
    public func subscriptionStatuses(
        of testerID: String, groupID: String
    ) throws(SandboxError) -> [SandboxSubscriptionStatus] {
        _ = try tester(testerID)
        try checkSimulatedError(.subscriptionStatus)
        var result: [SandboxSubscriptionStatus] = []
        let subscriptions = state.subscriptions.values.filter {
            $0.testerID == testerID && $0.subscriptionGroupID == groupID
        }
        for subscription in subscriptions.sorted(by: { $0.originalTransactionID < $1.originalTransactionID }) {
            guard let latest = latestTransaction(of: subscription.originalTransactionID) else { continue }
            result.append(
                SandboxSubscriptionStatus(
                    state: try status(originalTransactionID: subscription.originalTransactionID), transaction: latest,
                    renewalInfo: try renewalInfo(originalTransactionID: subscription.originalTransactionID)))
        }
        return result
    }
}
