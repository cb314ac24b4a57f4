import AppStoreModels
import Foundation

/// Win-back offers and offer codes.
extension SandboxEngine {
    // MARK: - Win-back offers

    /// Whether the tester may buy `product` with the win-back offer `offerID`: they subscribed in
    /// the product's group before, that subscription has expired (a subscription still active, in
    /// its grace period or in billing retry is not won back), and they have not used this offer yet.
    public func isEligibleForWinBack(_ offerID: String, product: SandboxProductInfo, testerID: String) -> Bool {
        guard let groupID = product.subscriptionGroupID,
            let subscription = state.subscriptions.values.first(where: {
                $0.testerID == testerID && $0.subscriptionGroupID == groupID
            }),
            (try? status(originalTransactionID: subscription.originalTransactionID)) == .expired
        else { return false }
        return !hasRedeemed(.winBack, offerID, productID: product.id, testerID: testerID)
    }

    /// The win-back offers an expired subscription's customer can use now, for the renewal info's
    /// `eligibleWinBackOfferIds`: those of the subscription's products not used yet; none while the
    /// subscription is active, in its grace period or in billing retry.
    func eligibleWinBackOfferIDs(_ subscription: SubscriptionState, storefront: String) -> [String] {
        guard (try? status(originalTransactionID: subscription.originalTransactionID)) == .expired else { return [] }
        var ids: [String] = []
        for productID in Set([subscription.autoRenewProductID, subscription.productID]).sorted() {
            guard let product = products(productID, storefront) else { continue }
            for offer in product.winBackOffers {
                guard let id = offer.identifier, !ids.contains(id),
                    !hasRedeemed(.winBack, id, productID: productID, testerID: subscription.testerID)
                else { continue }
                ids.append(id)
            }
        }
        return ids
    }

    private func hasRedeemed(_ type: OfferType, _ offerID: String, productID: String, testerID: String) -> Bool {
        transactions(of: testerID).contains {
            $0.offerType == type && $0.offerIdentifier == offerID && $0.productID == productID
        }
    }

    // MARK: - Offer codes

    /// Defines (or replaces) an offer code. The product and offer are checked when the code is
    /// redeemed, in the redeeming tester's storefront.
    @discardableResult
    public func defineOfferCode(_ offerCode: SandboxOfferCode) throws(SandboxError) -> SandboxOfferCode {
        let key = SandboxOfferCode.key(offerCode.code)
        guard !key.isEmpty, !offerCode.productID.isEmpty, !offerCode.offerID.isEmpty else {
            throw SandboxError(.invalidRequest, "an offer code needs a code, a productID and an offerID")
        }
        if let maximum = offerCode.maximumRedemptions, maximum < 1 {
            throw SandboxError(.invalidRequest, "maximumRedemptions must be 1 or more, not \(maximum)")
        }
        var code = offerCode
        code.code = key
        code.redeemedBy = state.offerCodes[key]?.redeemedBy ?? offerCode.redeemedBy
        state.offerCodes[key] = code
        try save()
        return code
    }

    /// The offer codes defined so far, by code.
    public func offerCodes() -> [SandboxOfferCode] {
        state.offerCodes.values.sorted { $0.code < $1.code }
    }

    /// Removes an offer code.
    public func removeOfferCode(_ code: String) throws(SandboxError) {
        guard state.offerCodes.removeValue(forKey: SandboxOfferCode.key(code)) != nil else {
            throw SandboxError(.unknownOfferCode, "no offer code \(code) is defined")
        }
        try save()
    }

    /// Redeems an offer code, as the offer code redeem sheet does (`presentOfferCodeRedeemSheet`).
    ///
    /// For a consumable, non-consumable or non-renewing subscription the code buys the product at
    /// the offer's price (`offerType` 3, `offerDiscountType` `ONE_TIME`) and sends ONE_TIME_CHARGE.
    /// For a subscription, a new or lapsed subscriber starts a period at the offer's terms; an
    /// active subscriber gets the offer from the next renewal (switching to the code's product
    /// then). Both send OFFER_REDEEMED. The transaction reaches the device as an update too.
    ///
    /// - Parameter definition: the code's definition when the engine holds none (the catalog's
    ///   side file defines codes too); the engine's own definition wins.
    /// - Throws: ``SandboxError/Code/unknownOfferCode`` for a code nobody defined,
    ///   ``SandboxError/Code/unknownProduct`` for a code naming a product the catalog lacks, and
    ///   ``SandboxError/Code/simulatedError`` while `offerCodeRedeem` is made to fail.
    public func redeemOfferCode(
        _ code: String, testerID: String, definition: SandboxOfferCode? = nil
    ) throws(SandboxError) -> PurchaseOutcome {
        let tester = try tester(testerID)
        try checkSimulatedError(.offerCodeRedeem)
        let key = SandboxOfferCode.key(code)
        guard var offerCode = state.offerCodes[key] ?? definition else {
            throw SandboxError(
                .unknownOfferCode, "no offer code \(code) is defined", storeKitCode: .invalidOfferIdentifier)
        }
        offerCode.code = key
        guard tester.canMakePayments else { return .failed(.paymentNotAllowed) }
        guard let product = products(offerCode.productID, tester.storefront) else {
            throw SandboxError(
                .unknownProduct, "the offer code \(key) names \(offerCode.productID), which the catalog does not have",
                storeKitCode: .storeProductNotAvailable)
        }
        guard product.isAvailable else { return .failed(.storeProductNotAvailable) }
        let exhausted = offerCode.maximumRedemptions.map { offerCode.redeemedBy.count >= $0 } ?? false
        guard !offerCode.redeemedBy.contains(tester.id), !exhausted else { return .failed(.ineligibleForOffer) }
        let request = PurchaseRequest(testerID: tester.id, productID: product.id)
        let transaction: SandboxTransaction
        if product.type == .autoRenewableSubscription {
            guard let offer = product.codeOffers.first(where: { $0.identifier == offerCode.offerID }) else {
                return .failed(.invalidOfferIdentifier)
            }
            transaction = try redeemSubscriptionOffer(offer, request: request, product: product, tester: tester)
        } else {
            guard let offer = product.oneTimeCodeOffers.first(where: { $0.identifier == offerCode.offerID }) else {
                return .failed(.invalidOfferIdentifier)
            }
            if product.type == .nonConsumable,
                transactions(of: tester.id).contains(where: { $0.productID == product.id && !$0.isRevoked })
            {
                return .failed(.ineligibleForOffer)
            }
            var bought = newTransaction(request, product: product, tester: tester)
            bought.offerType = .offerCode
            bought.offerIdentifier = offer.identifier
            bought.offerDiscountType = .oneTime
            bought.priceMilliunits = offer.priceMilliunits
            transaction = append(bought, event: .oneTimeCharge)
        }
        offerCode.redeemedBy.append(tester.id)
        state.offerCodes[key] = offerCode
        try save()
        return .purchased(transaction)
    }

    private func redeemSubscriptionOffer(
        _ offer: SandboxProductInfo.Offer, request: PurchaseRequest, product: SandboxProductInfo,
        tester: SandboxTester
    ) throws(SandboxError) -> SandboxTransaction {
        let now = clock.now()
        if let groupID = product.subscriptionGroupID,
            var subscription = state.subscriptions.values.first(where: {
                $0.testerID == tester.id && $0.subscriptionGroupID == groupID
            }),
            let latest = latestTransaction(of: subscription.originalTransactionID), !latest.isRevoked,
            subscription.expirationIntent == nil,
            latest.expiresDate.map({ $0 > now }) ?? false || subscription.billingState != .ok
        {
            subscription.autoRenewProductID = product.id
            subscription.autoRenewEnabled = true
            subscription.offerType = .offerCode
            subscription.offerIdentifier = offer.identifier
            subscription.offerPeriodsRemaining = offer.discountType == .payAsYouGo ? max(1, offer.periodCount) : 1
            state.subscriptions[subscription.originalTransactionID] = subscription
            record(.offerRedeemed, nil, latest)
            return latest
        }
        return try subscribe(request, product: product, tester: tester, codeOffer: offer)
    }
}
