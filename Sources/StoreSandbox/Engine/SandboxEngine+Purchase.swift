public import AppStoreModels
public import AppStoreSecurity
import Foundation

extension SandboxEngine {
    /// The largest quantity of a consumable one payment may buy, as StoreKit allows.
    public static let maximumQuantity = 10

    /// Adds a payment, as `SKPaymentQueue.add` or `Product.purchase()` does, and says how it ended.
    ///
    /// Follows the App Store's rules: parental restrictions, products not for sale, injected
    /// failures, ask to buy and interrupted purchases defer; a non-consumable already owned is
    /// returned, not charged again; subscriptions upgrade (and crossgrade to the same duration) at
    /// once and downgrade at the next renewal.
    ///
    /// - Throws: ``SandboxError/Code/unknownProduct`` when the catalog has no such product, and
    ///   ``SandboxError/Code/invalidQuantity`` for a quantity outside 1…``maximumQuantity`` (or above
    ///   1 for anything but a consumable): StoreKit refuses both before any payment starts.
    /// - Parameter offerKeys: In-App Purchase keys trusted for offer signatures besides the
    ///   registered ones (``registerOfferKey(_:)``).
    public func purchase(
        _ request: PurchaseRequest, offerKeys: [AppStoreServerAPITokenVerifier.Key] = []
    ) throws(SandboxError) -> PurchaseOutcome {
        let tester = try tester(request.testerID)
        if let code = simulatedError(for: .purchase) { return .failed(code) }
        guard tester.canMakePayments else { return .failed(.paymentNotAllowed) }
        guard let product = products(request.productID, tester.storefront) else {
            throw SandboxError(
                .unknownProduct, "no product in the catalog has the ID \(request.productID)",
                storeKitCode: .storeProductNotAvailable)
        }
        guard product.isAvailable else { return .failed(.storeProductNotAvailable) }
        try Self.checkQuantity(request.quantity, of: product)
        if let code = state.settings.failPurchasesWith { return .failed(code) }
        if let offerID = request.promotionalOfferID,
            let code = checkPromotionalOffer(request, offerID: offerID, product: product, extraKeys: offerKeys)
        {
            return .failed(code)
        }
        var request = request
        let introductory = introductoryOfferDecision(request, product: product, extraKeys: offerKeys)
        if let code = introductory.failure { return .failed(code) }
        request.introductoryOfferAllowed = introductory.allow
        if let offerID = request.winBackOfferID {
            guard product.type == .autoRenewableSubscription,
                product.winBackOffers.contains(where: { $0.identifier == offerID })
            else { return .failed(.invalidOfferIdentifier) }
            guard isEligibleForWinBack(offerID, product: product, testerID: tester.id) else {
                return .failed(.ineligibleForOffer)
            }
        }
        if tester.interruptsPurchases || tester.asksToBuy || state.settings.askToBuy || request.simulatesAskToBuy {
            let pending = PendingPurchase(
                id: UUID().uuidString.lowercased(), reason: tester.interruptsPurchases ? .interrupted : .askToBuy,
                request: request, createdAt: clock.now())
            state.pendingPurchases[pending.id] = pending
            try save()
            return .deferred(pending)
        }
        let transaction = try complete(request, product: product, tester: tester)
        try save()
        return .purchased(transaction)
    }

    static func checkQuantity(_ quantity: Int, of product: SandboxProductInfo) throws(SandboxError) {
        if product.type == .consumable {
            guard (1...maximumQuantity).contains(quantity) else {
                throw SandboxError(
                    .invalidQuantity,
                    "the quantity \(quantity) of \(product.id) is outside 1 to \(maximumQuantity), what StoreKit allows",
                    storeKitCode: .paymentInvalid)
            }
        } else if quantity != 1 {
            throw SandboxError(
                .invalidQuantity, "\(product.id) is not a consumable: its quantity must be 1, not \(quantity)",
                storeKitCode: .paymentInvalid)
        }
    }

    /// Approves a deferred purchase (a parent said yes, or the tester completed the interrupted
    /// purchase): it completes now and reaches the device as a transaction update.
    public func approve(_ pendingID: String) throws(SandboxError) -> PurchaseOutcome {
        guard let pending = state.pendingPurchases.removeValue(forKey: pendingID) else {
            throw SandboxError(.unknownPendingPurchase, "no pending purchase has ID \(pendingID)")
        }
        let tester = try tester(pending.request.testerID)
        guard let product = products(pending.request.productID, tester.storefront), product.isAvailable else {
            try save()
            return .failed(.storeProductNotAvailable)
        }
        let transaction = try complete(pending.request, product: product, tester: tester)
        try save()
        return .purchased(transaction)
    }

    /// Declines a deferred purchase: it ends as failed, as StoreKit reports a declined ask to buy.
    public func decline(_ pendingID: String) throws(SandboxError) -> PurchaseOutcome {
        guard state.pendingPurchases.removeValue(forKey: pendingID) != nil else {
            throw SandboxError(.unknownPendingPurchase, "no pending purchase has ID \(pendingID)")
        }
        try save()
        return .failed(.paymentCancelled)
    }

    /// Purchases waiting for approval or completion.
    public func pendingPurchases(of testerID: String? = nil) -> [PendingPurchase] {
        state.pendingPurchases.values.filter { testerID == nil || $0.request.testerID == testerID }
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// Finishes a transaction, as `finishTransaction` / `Transaction.finish()` do. A finished
    /// consumable no longer appears in the receipt or among unfinished transactions.
    public func finish(_ transactionID: String, testerID: String) throws(SandboxError) {
        guard state.transactions[transactionID]?.testerID == testerID else {
            throw SandboxError(.unknownTransaction, "tester \(testerID) has no transaction \(transactionID)")
        }
        state.transactions[transactionID]?.isFinished = true
        try save()
    }

    /// The whole of a transaction in milliunits of a percent, Apple's `revocationPercentage` of a
    /// full refund.
    public static let fullRefundPercentage = 100_000

    /// Refunds a transaction: it gets a revocation date, reason, type and percentage, stops
    /// entitling, and a REFUND notification is recorded. A refunded subscription that was shared by
    /// Family Sharing is shared no more: each member's current transaction is revoked (REVOKE).
    ///
    /// `percentage` is the refunded share in milliunits of a percent, as Apple's
    /// `revocationPercentage` says it: 50000 refunds half. Without it, or at 100000, the refund is
    /// full (`REFUND_FULL`, `revocationPercentage` 100000, which Apple's documentation lists for
    /// refunded transactions); below, it is prorated (`REFUND_PRORATED`). Either way the App Store
    /// ends access to what was refunded: a prorated refund of a non-consumable or a subscription
    /// revokes it as a full one does, and the developer's server decides what a share of a
    /// consumable takes back.
    ///
    /// The percentage is the transaction's refunded share in all, not an increment: refunding 50000
    /// and then 100000 refunds the other half (a second REFUND, now `REFUND_FULL`). Refunding a
    /// share no larger than the one already refunded, or refunding a transaction revoked otherwise,
    /// changes nothing and records no notification.
    ///
    /// - Throws: ``SandboxError/Code/invalidRefundPercentage`` for a percentage outside
    ///   1…``fullRefundPercentage``, ``SandboxError/Code/unknownTransaction`` for an unknown ID.
    @discardableResult
    public func refund(
        _ transactionID: String, reason: RevocationReason = .other, percentage: Int? = nil
    ) throws(SandboxError)
        -> SandboxTransaction
    {
        let share = percentage ?? Self.fullRefundPercentage
        guard (1...Self.fullRefundPercentage).contains(share) else {
            throw SandboxError(
                .invalidRefundPercentage,
                "a refund's percentage is in milliunits of a percent, 1 to \(Self.fullRefundPercentage) "
                    + "(0.001 % to 100 %), not \(share)")
        }
        return try revoke(
            transactionID, reason: reason, type: share == Self.fullRefundPercentage ? .refundFull : .refundProrated,
            percentage: share, notification: .refund)
    }

    /// Revokes a transaction without a refund to this customer (family sharing ended): REVOKE.
    /// For a family member's shared subscription, the subscription is no longer shared with them:
    /// later renewals of the purchaser's are not theirs (see ``shareWithFamily(_:member:)``).
    @discardableResult
    public func revoke(_ transactionID: String) throws(SandboxError) -> SandboxTransaction {
        try revoke(transactionID, reason: .other, type: .familyRevoke, percentage: nil, notification: .revoke)
    }

    private func revoke(
        _ transactionID: String, reason: RevocationReason, type: RevocationType, percentage: Int?,
        notification: NotificationTypeV2
    )
        throws(SandboxError) -> SandboxTransaction
    {
        guard var transaction = state.transactions[transactionID] else {
            throw SandboxError(.unknownTransaction, "no transaction has ID \(transactionID)")
        }
        if transaction.revocationDate != nil {
            // Only a larger refund of a prorated refund changes a revoked transaction.
            guard transaction.revocationType == .refundProrated, let percentage,
                percentage > transaction.revocationPercentage ?? Self.fullRefundPercentage
            else { return transaction }
        }
        transaction.revocationDate = clock.now()
        transaction.revocationReason = reason
        transaction.revocationType = type
        transaction.revocationPercentage = percentage
        state.transactions[transactionID] = transaction
        state.refundRequests[transactionID] = nil
        noteUpdate(transaction)
        if transaction.productType == .autoRenewableSubscription {
            state.subscriptions[transaction.originalID]?.autoRenewEnabled = false
        }
        record(notification, nil, transaction)
        endFamilySharing(after: transaction)
        try save()
        return transaction
    }

    // MARK: - Completing a payment

    func complete(
        _ request: PurchaseRequest, product: SandboxProductInfo, tester: SandboxTester
    ) throws(SandboxError)
        -> SandboxTransaction
    {
        switch product.type {
        case .nonConsumable:
            if let owned = transactions(of: tester.id).first(where: { $0.productID == product.id && !$0.isRevoked }) {
                return owned
            }
            return append(newTransaction(request, product: product, tester: tester), event: .oneTimeCharge)
        case .autoRenewableSubscription:
            return try subscribe(request, product: product, tester: tester)
        default:
            return append(newTransaction(request, product: product, tester: tester), event: .oneTimeCharge)
        }
    }

    func newTransaction(
        _ request: PurchaseRequest, product: SandboxProductInfo, tester: SandboxTester, originalID: String? = nil,
        originalPurchaseDate: Date? = nil, purchaseDate: Date? = nil
    ) -> SandboxTransaction {
        let now = purchaseDate ?? clock.now()
        let id = state.takeTransactionID()
        let orderID = "MK" + String(UInt64(id) ?? 0, radix: 36, uppercase: true)
        let token = request.appAccountToken ?? request.applicationUsername.flatMap(UUID.init(uuidString:))
        return SandboxTransaction(
            id: id, originalID: originalID ?? id,
            webOrderLineItemID: product.type == .autoRenewableSubscription ? state.takeWebOrderLineItemID() : nil,
            testerID: tester.id, productID: product.id, productType: product.type,
            subscriptionGroupID: product.subscriptionGroupID, purchaseDate: now,
            originalPurchaseDate: originalPurchaseDate ?? now, quantity: request.quantity,
            appAccountToken: token?.uuidString.lowercased(),
            applicationUsername: token == nil ? request.applicationUsername : nil, storefront: tester.storefront,
            storefrontID: storefrontIDs[tester.storefront] ?? "", currency: product.currency,
            priceMilliunits: product.priceMilliunits, appTransactionID: appDownload(of: tester.id).appTransactionID,
            orderID: orderID)
    }

    func append(
        _ transaction: SandboxTransaction, event: NotificationTypeV2?, subtype: NotificationSubtype? = nil
    )
        -> SandboxTransaction
    {
        state.transactions.append(transaction)
        noteUpdate(transaction)
        if let event { record(event, subtype, transaction) }
        return transaction
    }

    /// The tester's download of the app, made on first use.
    func appDownload(of testerID: String) -> SandboxState.AppDownload {
        if let download = state.appDownloads[testerID] { return download }
        let download = SandboxState.AppDownload(
            appTransactionID: "70" + String(state.takeTransactionID().dropFirst(2)), originalPurchaseDate: clock.now())
        state.appDownloads[testerID] = download
        return download
    }
}
