public import AppStoreModels
import Foundation

extension SandboxEngine {
    /// How long Apple keeps retrying a failed renewal before the subscription expires.
    static let billingRetryDuration: TimeInterval = 60 * 86_400

    /// The latest transaction of a subscription.
    func latestTransaction(of originalID: String) -> SandboxTransaction? {
        state.transactions.last(in: .original(originalID)) { $0.productType == .autoRenewableSubscription }
    }

    func subscribe(
        _ request: PurchaseRequest, product: SandboxProductInfo, tester: SandboxTester,
        codeOffer: SandboxProductInfo.Offer? = nil
    ) throws(SandboxError)
        -> SandboxTransaction
    {
        guard let groupID = product.subscriptionGroupID, let period = product.period else {
            throw SandboxError(
                .invalidRequest, "\(product.id) is an auto-renewable subscription without a group or period")
        }
        let plan = try checkBillingPlan(request)
        let now = clock.now()
        // A subscription shared with the tester by Family Sharing is not theirs to change: buying
        // in its group starts a subscription of their own.
        let existing = state.subscriptions.values.first {
            $0.testerID == tester.id && $0.subscriptionGroupID == groupID && $0.sharedFromOriginalTransactionID == nil
        }
        // Still active (or in grace period or billing retry): a change within the group. Expired
        // (billing retry given up included): a new period.
        if let existing, let latest = latestTransaction(of: existing.originalTransactionID),
            !latest.isRevoked, existing.expirationIntent == nil,
            latest.expiresDate.map({ $0 > now }) ?? false || existing.billingState != .ok
        {
            return try change(existing, latest: latest, to: product, period: period)
        }

        var offer: SandboxProductInfo.Offer?
        var offerType: OfferType?
        if let codeOffer {
            offer = codeOffer
            offerType = .offerCode
        } else if let offerID = request.promotionalOfferID {
            offer = product.promotionalOffers.first { $0.identifier == offerID }
            offerType = .promotional
        } else if let offerID = request.winBackOfferID {
            offer = product.winBackOffers.first { $0.identifier == offerID }
            offerType = .winBack
        } else if let intro = product.introductoryOffer,
            request.introductoryOfferAllowed
                ?? !transactions(of: tester.id).contains(where: { $0.subscriptionGroupID == groupID })
        {
            offer = intro
            offerType = .introductory
        }
        if plan != nil {
            // The sandbox applies no offer to a commitment plan: its months are billed as agreed.
            offer = nil
            offerType = nil
        }

        let originalID = existing?.originalTransactionID
        let originalDate = originalID.flatMap { state.transactions[$0]?.purchaseDate }
        var transaction = newTransaction(
            request, product: product, tester: tester, originalID: originalID, originalPurchaseDate: originalDate)
        if let offer, let offerType {
            transaction.apply(offer, type: offerType, from: now)
        } else {
            transaction.expiresDate = period.advance(now)
        }
        let commitment = plan.map { SubscriptionState.Commitment(plan: $0, startDate: now) }
        if let commitment { transaction.bill(commitment, period: 1) }
        var subscription =
            existing
            ?? SubscriptionState(
                originalTransactionID: transaction.id, testerID: tester.id, subscriptionGroupID: groupID,
                productID: product.id, startDate: now)
        subscription.productID = product.id
        subscription.autoRenewProductID = product.id
        subscription.autoRenewEnabled = true
        subscription.billingState = .ok
        subscription.billingFails = false
        subscription.gracePeriodExpiresDate = nil
        subscription.expirationIntent = nil
        subscription.offerIdentifier = offer?.identifier
        subscription.offerType = offer == nil ? nil : offerType
        subscription.offerPeriodsRemaining = offer?.remainingPeriods ?? 0
        subscription.commitment = commitment
        if existing != nil, let lapseStart = latestTransaction(of: subscription.originalTransactionID)?.expiresDate,
            now.timeIntervalSince(lapseStart) > 60 * 86_400
        {
            subscription.recentSubscriptionStartDate = now
        }
        state.subscriptions[subscription.originalTransactionID] = subscription
        let type: NotificationTypeV2 =
            offerType == .promotional || offerType == .winBack || offerType == .offerCode ? .offerRedeemed : .subscribed
        let subscribed = append(transaction, event: type, subtype: existing == nil ? .initialBuy : .resubscribe)
        // Members the lapsed subscription is still shared with have it again.
        if existing != nil { shareNewPeriod(subscribed, type: .subscribed, subtype: .resubscribe) }
        return subscribed
    }

    /// A purchase inside a group the customer already subscribes to: the same product is already
    /// theirs; a higher level upgrades at once (the current period is refunded pro rata and marked
    /// upgraded), and so does a crossgrade to the same level with the same duration; a crossgrade to
    /// another duration and a lower level take effect at the next renewal.
    private func change(
        _ subscription: SubscriptionState, latest: SandboxTransaction, to product: SandboxProductInfo,
        period: SubscriptionPeriod
    ) throws(SandboxError) -> SandboxTransaction {
        var subscription = subscription
        if product.id == subscription.productID {
            if !subscription.autoRenewEnabled || subscription.autoRenewProductID != product.id {
                subscription.autoRenewEnabled = true
                subscription.autoRenewProductID = product.id
                state.subscriptions[subscription.originalTransactionID] = subscription
                record(.didChangeRenewalStatus, .autoRenewEnabled, latest)
            }
            return latest
        }
        let current = products(subscription.productID, latest.storefront)
        let currentLevel = current?.groupLevel ?? Int.max
        let newLevel = product.groupLevel ?? Int.max
        let immediateCrossgrade = newLevel == currentLevel && current?.period == period
        if newLevel < currentLevel || immediateCrossgrade {
            if var upgraded = state.transactions[latest.id] {
                upgraded.isUpgraded = true
                state.transactions[latest.id] = upgraded
                noteUpdate(upgraded)
            }
            let now = clock.now()
            let tester = try tester(latest.testerID)
            var transaction = newTransaction(
                PurchaseRequest(testerID: tester.id, productID: product.id), product: product, tester: tester,
                originalID: subscription.originalTransactionID, originalPurchaseDate: latest.originalPurchaseDate)
            transaction.expiresDate = period.advance(now)
            subscription.productID = product.id
            subscription.autoRenewProductID = product.id
            subscription.autoRenewEnabled = true
            subscription.offerPeriodsRemaining = 0
            state.subscriptions[subscription.originalTransactionID] = subscription
            let upgradedTo = append(transaction, event: .didChangeRenewalPref, subtype: .upgrade)
            shareNewPeriod(upgradedTo, type: .didChangeRenewalPref, subtype: .upgrade, upgrade: true)
            return upgradedTo
        }
        subscription.autoRenewProductID = product.id
        subscription.autoRenewEnabled = true
        state.subscriptions[subscription.originalTransactionID] = subscription
        record(.didChangeRenewalPref, .downgrade, latest)
        return latest
    }

    // MARK: - Renewals

    /// Brings every subscription up to the sandbox clock: renewals, billing failures, grace
    /// periods, billing retry and expiries, each with its notification.
    @discardableResult
    public func processRenewals() throws(SandboxError) -> [SandboxEvent] {
        let mark = state.events.endMark
        let now = clock.now()
        for originalID in state.subscriptions.keys.sorted() {
            try advance(originalID, to: now)
        }
        // Written only when something renewed, failed or expired: an idle sandbox writes nothing.
        if state.hasUnsavedRows { try save() }
        return state.events.records(since: mark)
    }

    private func advance(_ originalID: String, to now: Date) throws(SandboxError) {
        // Bounded: a clock moved years ahead renews period by period, never forever.
        for _ in 0..<10_000 {
            // A family member's shared subscription follows the purchaser's and never renews by itself.
            guard var subscription = state.subscriptions[originalID],
                subscription.sharedFromOriginalTransactionID == nil, let latest = latestTransaction(of: originalID),
                !latest.isRevoked, subscription.expirationIntent == nil, let expires = latest.expiresDate,
                expires <= now
            else { return }
            // Within a commitment every month is billed: turning auto-renewal off ends it afterwards.
            guard subscription.autoRenewEnabled || subscription.commitment?.hasPeriodsLeft == true else {
                subscription.expirationIntent = .customerCancelled
                state.subscriptions[originalID] = subscription
                record(.expired, .voluntary, latest)
                notifyFamily(of: originalID, .expired, .voluntary)
                return
            }
            if subscription.billingFails {
                try failRenewal(&subscription, latest: latest, expires: expires, now: now)
                state.subscriptions[originalID] = subscription
                return
            }
            let recovering = subscription.billingState != .ok
            if try renewCommitment(&subscription, latest: latest, expires: expires, now: now) {
                if let renewal = latestTransaction(of: originalID) {
                    shareNewPeriod(renewal, type: .didRenew, subtype: recovering ? .billingRecovery : nil)
                }
                continue
            }
            let tester = try tester(latest.testerID)
            guard let product = products(subscription.autoRenewProductID, tester.storefront),
                let period = product.period,
                product.isAvailable
            else {
                subscription.expirationIntent = .productNotAvailable
                state.subscriptions[originalID] = subscription
                record(.expired, .productNotForSale, latest)
                notifyFamily(of: originalID, .expired, .productNotForSale)
                return
            }
            if let increase = subscription.priceIncrease, increase.productID == product.id {
                guard increase.consented || !increase.requiresConsent else {
                    subscription.expirationIntent = .didNotConsentToPriceIncrease
                    state.subscriptions[originalID] = subscription
                    record(.expired, .priceIncrease, latest)
                    notifyFamily(of: originalID, .expired, .priceIncrease)
                    return
                }
                subscription.renewalPriceMilliunits = increase.priceMilliunits
                subscription.renewalPriceProductID = product.id
                subscription.priceIncrease = nil
            }
            let recovered = subscription.billingState != .ok
            var renewal = newTransaction(
                PurchaseRequest(testerID: tester.id, productID: product.id), product: product, tester: tester,
                originalID: originalID, originalPurchaseDate: latest.originalPurchaseDate,
                purchaseDate: recovered ? now : expires)
            renewal.reason = .renewal
            renewal.isFinished = false
            if subscription.renewalPriceProductID == product.id, let price = subscription.renewalPriceMilliunits {
                renewal.priceMilliunits = price
            }
            if subscription.offerPeriodsRemaining > 0,
                let offer = product.offer(subscription.currentOfferType, identifier: subscription.offerIdentifier)
            {
                subscription.offerPeriodsRemaining -= 1
                renewal.offerType = subscription.currentOfferType
                renewal.offerIdentifier = subscription.offerIdentifier
                renewal.offerDiscountType = offer.discountType
                renewal.offerPeriod = offer.period.iso8601
                renewal.priceMilliunits = offer.priceMilliunits
                renewal.expiresDate =
                    offer.discountType == .payAsYouGo
                    ? offer.period.advance(renewal.purchaseDate) : offer.end(from: renewal.purchaseDate)
            } else {
                renewal.expiresDate = period.advance(renewal.purchaseDate)
            }
            subscription.productID = product.id
            subscription.billingState = .ok
            subscription.gracePeriodExpiresDate = nil
            state.subscriptions[originalID] = subscription
            let renewed = append(renewal, event: .didRenew, subtype: recovered ? .billingRecovery : nil)
            shareNewPeriod(renewed, type: .didRenew, subtype: recovered ? .billingRecovery : nil)
        }
    }

    /// A renewal that cannot be charged: DID_FAIL_TO_RENEW (GRACE_PERIOD when the sandbox gives
    /// one), GRACE_PERIOD_EXPIRED when the grace period is over, EXPIRED / BILLING_RETRY when the
    /// App Store gives up. Each state is stored before its event is recorded, so that each
    /// notification carries the renewal info of its own step.
    private func failRenewal(
        _ subscription: inout SubscriptionState, latest: SandboxTransaction, expires: Date, now: Date
    ) throws(SandboxError) {
        func record(_ type: NotificationTypeV2, _ subtype: NotificationSubtype?) {
            state.subscriptions[subscription.originalTransactionID] = subscription
            self.record(type, subtype, latest)
            notifyFamily(of: subscription.originalTransactionID, type, subtype)
        }
        switch subscription.billingState {
        case .ok:
            let graceDays = state.settings.gracePeriodDays
            if graceDays > 0 {
                subscription.billingState = .gracePeriod
                subscription.gracePeriodExpiresDate = expires.addingTimeInterval(Double(graceDays) * 86_400)
                record(.didFailToRenew, .gracePeriod)
            } else {
                subscription.billingState = .billingRetry
                record(.didFailToRenew, nil)
            }
            if subscription.billingState == .gracePeriod, let end = subscription.gracePeriodExpiresDate, end <= now {
                subscription.billingState = .billingRetry
                record(.gracePeriodExpired, nil)
            }
        case .gracePeriod:
            if let end = subscription.gracePeriodExpiresDate, end <= now {
                subscription.billingState = .billingRetry
                record(.gracePeriodExpired, nil)
            }
        case .billingRetry:
            break
        }
        if subscription.billingState == .billingRetry, now.timeIntervalSince(expires) >= Self.billingRetryDuration {
            subscription.expirationIntent = .billingError
            record(.expired, .billingRetry)
        }
    }

    // MARK: - Control

    /// Turns auto-renewal on or off (the customer's choice in Settings). Family members the
    /// subscription is shared with follow, each notified too.
    ///
    /// - Throws: ``SandboxError/Code/ineligible`` for a family member's shared subscription, which
    ///   follows the purchaser's.
    public func setAutoRenew(_ enabled: Bool, originalTransactionID: String) throws(SandboxError) {
        guard var subscription = state.subscriptions[originalTransactionID],
            let latest = latestTransaction(of: originalTransactionID)
        else { throw SandboxError(.unknownTransaction, "no subscription has original ID \(originalTransactionID)") }
        guard subscription.sharedFromOriginalTransactionID == nil else {
            throw SandboxError(
                .ineligible, "\(originalTransactionID) is shared by Family Sharing: the purchaser renews it")
        }
        guard subscription.autoRenewEnabled != enabled else { return }
        subscription.autoRenewEnabled = enabled
        state.subscriptions[originalTransactionID] = subscription
        let subtype: NotificationSubtype = enabled ? .autoRenewEnabled : .autoRenewDisabled
        record(.didChangeRenewalStatus, subtype, latest)
        notifyFamily(of: originalTransactionID, .didChangeRenewalStatus, subtype)
        try save()
    }

    /// Makes renewals fail (a billing problem) until ``resolveBillingIssue(originalTransactionID:)``.
    public func failRenewals(originalTransactionID: String) throws(SandboxError) {
        guard state.subscriptions[originalTransactionID] != nil else {
            throw SandboxError(.unknownTransaction, "no subscription has original ID \(originalTransactionID)")
        }
        state.subscriptions[originalTransactionID]?.billingFails = true
        try save()
    }

    /// Ends a billing problem: a subscription in grace period or billing retry renews at once.
    public func resolveBillingIssue(originalTransactionID: String) throws(SandboxError) {
        guard state.subscriptions[originalTransactionID] != nil else {
            throw SandboxError(.unknownTransaction, "no subscription has original ID \(originalTransactionID)")
        }
        state.subscriptions[originalTransactionID]?.billingFails = false
        try advance(originalTransactionID, to: clock.now())
        try save()
    }

    /// The renewal info Apple signs for a subscription (`signedRenewalInfo`).
    public func renewalInfo(originalTransactionID: String) throws(SandboxError) -> JWSRenewalInfoDecodedPayload {
        guard let subscription = state.subscriptions[originalTransactionID],
            let latest = latestTransaction(of: originalTransactionID)
        else { throw SandboxError(.unknownTransaction, "no subscription has original ID \(originalTransactionID)") }
        let next = products(subscription.autoRenewProductID, latest.storefront)
        var renewalPrice = next?.priceMilliunits
        if subscription.renewalPriceProductID == subscription.autoRenewProductID,
            let price = subscription.renewalPriceMilliunits
        {
            renewalPrice = price
        }
        var priceIncreaseStatus: PriceIncreaseStatus?
        if let increase = subscription.priceIncrease, increase.productID == subscription.autoRenewProductID {
            renewalPrice = increase.priceMilliunits
            priceIncreaseStatus =
                increase.consented || !increase.requiresConsent
                ? .customerConsentedOrWasNotified : .customerHasNotResponded
        }
        var upcoming: (type: OfferType, offer: SandboxProductInfo.Offer)?
        if subscription.offerPeriodsRemaining > 0,
            let offer = next?.offer(subscription.currentOfferType, identifier: subscription.offerIdentifier)
        {
            upcoming = (subscription.currentOfferType, offer)
            renewalPrice = offer.priceMilliunits
        }
        let winBack = eligibleWinBackOfferIDs(subscription, storefront: latest.storefront)
        var info = JWSRenewalInfoDecodedPayload(
            expirationIntent: subscription.expirationIntent, originalTransactionID: originalTransactionID,
            autoRenewProductID: subscription.autoRenewProductID, productID: subscription.productID,
            autoRenewStatus: subscription.autoRenewEnabled ? .on : .off,
            // The App Store retries the charge throughout the grace period too.
            isInBillingRetryPeriod: subscription.billingState != .ok && subscription.expirationIntent == nil,
            priceIncreaseStatus: priceIncreaseStatus, gracePeriodExpiresDate: subscription.gracePeriodExpiresDate,
            offerType: upcoming?.type, offerIdentifier: upcoming == nil ? nil : subscription.offerIdentifier,
            environment: .sandbox, recentSubscriptionStartDate: subscription.recentSubscriptionStartDate,
            renewalDate: latest.expiresDate, currency: next?.currency, renewalPrice: renewalPrice,
            offerDiscountType: upcoming?.offer.discountType, eligibleWinBackOfferIDs: winBack.isEmpty ? nil : winBack,
            appAccountToken: latest.appAccountToken, appTransactionID: latest.appTransactionID,
            offerPeriod: upcoming?.offer.period.iso8601)
        addCommitment(of: subscription, to: &info, storefront: latest.storefront)
        return info
    }

    /// The App Store Server API status of a subscription: 1 active, 2 expired, 3 billing retry,
    /// 4 grace period, 5 revoked.
    public func status(originalTransactionID: String) throws(SandboxError) -> SubscriptionStatus {
        guard let subscription = state.subscriptions[originalTransactionID],
            let latest = latestTransaction(of: originalTransactionID)
        else { throw SandboxError(.unknownTransaction, "no subscription has original ID \(originalTransactionID)") }
        if latest.isRevoked { return .revoked }
        if subscription.expirationIntent != nil { return .expired }
        switch subscription.billingState {
        case .gracePeriod: return .billingGracePeriod
        case .billingRetry: return .billingRetry
        case .ok: return (latest.expiresDate ?? .distantFuture) > clock.now() ? .active : .expired
        }
    }
}

extension SandboxEngine {
    /// Renews a subscription now, without waiting for its period to end (the control API's
    /// "force a renewal"): the current period is cut short at the sandbox's present time, and so
    /// are the current periods of the family members it is shared with.
    ///
    /// - Throws: ``SandboxError/Code/ineligible`` for a family member's shared subscription, which
    ///   renews with the purchaser's.
    @discardableResult
    public func forceRenewal(originalTransactionID: String) throws(SandboxError) -> [SandboxEvent] {
        guard let latest = latestTransaction(of: originalTransactionID),
            let subscription = state.subscriptions[originalTransactionID]
        else { throw SandboxError(.unknownTransaction, "no subscription has original ID \(originalTransactionID)") }
        guard subscription.sharedFromOriginalTransactionID == nil else {
            throw SandboxError(
                .ineligible, "\(originalTransactionID) is shared by Family Sharing: the purchaser renews it")
        }
        let now = clock.now()
        let current = [latest] + (subscription.familyMembers ?? [:]).values.compactMap { latestTransaction(of: $0) }
        for transaction in current {
            if let expires = transaction.expiresDate, expires > now {
                state.transactions[transaction.id]?.expiresDate = now
            }
        }
        return try processRenewals()
    }
}
