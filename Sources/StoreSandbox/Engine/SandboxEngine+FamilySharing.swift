import AppStoreModels
import Foundation

/// Family Sharing: a purchase shared with a member of the buyer's family.
extension SandboxEngine {
    /// Shares a purchase with `member`, as Family Sharing does when the buyer's family has a new
    /// member or the buyer turns sharing on: the member gets a transaction of their own
    /// (`inAppOwnershipType` `FAMILY_SHARED`, its own transaction and original transaction IDs),
    /// which reaches their devices and is notified. ``revoke(_:)`` of the member's transaction ends
    /// it (REVOKE, `revocationType` `FAMILY_REVOKE`), as when the member leaves the family.
    ///
    /// A non-consumable or a non-renewing subscription is shared as it was bought (ONE_TIME_CHARGE).
    ///
    /// An auto-renewable subscription must be active; any of its transactions names it, and its
    /// current period is what is shared. The member gets a subscription of their own, with its own
    /// original transaction ID, that follows the purchaser's:
    /// - Now: a transaction of the same product, bought now (the sandbox clock) and expiring with
    ///   the purchaser's period; SUBSCRIBED / INITIAL_BUY, which Apple sends when a customer
    ///   "received access through Family Sharing to the subscription for the first time", or
    ///   SUBSCRIBED / RESUBSCRIBE when the same subscription was shared with the member before.
    /// - Each renewal of the purchaser's: a renewal transaction in the member's subscription (same
    ///   original transaction ID, the renewal's product and period), DID_RENEW (BILLING_RECOVERY
    ///   after a billing failure); a resubscription after an expiry: SUBSCRIBED / RESUBSCRIBE.
    /// - Billing failures, expiries and auto-renewal turned on or off: the member's subscription
    ///   takes the purchaser's renewal state and gets the same notification (DID_FAIL_TO_RENEW,
    ///   GRACE_PERIOD_EXPIRED, EXPIRED with the purchaser's subtype, DID_CHANGE_RENEWAL_STATUS).
    ///   Apple documents DID_FAIL_TO_RENEW and the recovery for each family member; the others are
    ///   simulated the same way.
    /// - An upgrade, which takes effect at once: the member's current transaction is marked
    ///   upgraded and a transaction of the new product follows, with the purchaser's new period
    ///   (DID_CHANGE_RENEWAL_PREF / UPGRADE). A downgrade or crossgrade at the next renewal reaches
    ///   the member with that renewal, which is of the purchaser's new product. A product without
    ///   Family Sharing ends the share (REVOKE).
    /// - A refund of the purchaser's (``refund(_:reason:percentage:)``): the member's current
    ///   transaction is revoked (REVOKE, `FAMILY_REVOKE`, as Apple sends when "the purchaser asks for
    ///   and receives a refund") and the subscription is no longer shared with them; share it again
    ///   to restore it.
    ///
    /// The member is charged nothing: their transactions carry price 0, are never billed through a
    /// commitment plan and carry no offer, whatever the purchaser paid. The member's subscription
    /// cannot be changed on its own (``setAutoRenew(_:originalTransactionID:)`` and
    /// ``forceRenewal(originalTransactionID:)`` refuse it): the purchaser's decides.
    ///
    /// - Throws: ``SandboxError/Code/unknownTransaction`` or ``SandboxError/Code/unknownTester``;
    ///   ``SandboxError/Code/ineligible`` for a product without Family Sharing, a consumable, a
    ///   revoked or shared purchase, the buyer themselves, a subscription that is not active, or one
    ///   already shared with the member.
    @discardableResult
    public func shareWithFamily(
        _ transactionID: String, member testerID: String
    ) throws(SandboxError)
        -> SandboxTransaction
    {
        let purchase = try transaction(transactionID)
        let member = try tester(testerID)
        guard let product = products(purchase.productID, member.storefront), product.isFamilyShareable else {
            throw SandboxError(.ineligible, "\(purchase.productID) does not have Family Sharing on")
        }
        guard !purchase.isRevoked, purchase.ownership != .familyShared, purchase.testerID != member.id else {
            throw SandboxError(.ineligible, "\(transactionID) cannot be shared with \(member.id)")
        }
        switch purchase.productType {
        case .nonConsumable, .nonRenewingSubscription:
            break
        case .autoRenewableSubscription:
            return try shareSubscription(purchase, with: member)
        default:
            throw SandboxError(
                .ineligible, "only non-consumables and subscriptions are shared, not \(purchase.productType.rawValue)")
        }
        var shared = purchase
        shared.id = state.takeTransactionID()
        shared.originalID = shared.id
        shared.testerID = member.id
        shared.ownership = .familyShared
        shared.appAccountToken = nil
        shared.applicationUsername = nil
        shared.isFinished = false
        shared.appTransactionID = appDownload(of: member.id).appTransactionID
        let recorded = append(shared, event: .oneTimeCharge)
        try save()
        return recorded
    }

    private func shareSubscription(
        _ purchase: SandboxTransaction, with member: SandboxTester
    ) throws(SandboxError)
        -> SandboxTransaction
    {
        let originalID = purchase.originalID
        guard var subscription = state.subscriptions[originalID], let latest = latestTransaction(of: originalID)
        else { throw SandboxError(.unknownTransaction, "no subscription has original ID \(originalID)") }
        guard try status(originalTransactionID: originalID) == .active else {
            throw SandboxError(.ineligible, "only an active subscription is shared; \(originalID) is not")
        }
        // A share whose member's history was cleared since is no share.
        guard subscription.familyMembers?[member.id].flatMap({ state.subscriptions[$0] }) == nil else {
            throw SandboxError(.ineligible, "\(originalID) is shared with \(member.id) already")
        }
        let now = clock.now()
        // The member's earlier share of the same subscription, revoked since, comes back.
        let previous = state.subscriptions.values.first {
            $0.testerID == member.id && $0.sharedFromOriginalTransactionID == originalID
        }
        let shared = familyTransaction(
            mirroring: latest, member: member, originalID: previous?.originalTransactionID, purchaseDate: now,
            reason: .purchase)
        var memberSubscription =
            previous
            ?? SubscriptionState(
                originalTransactionID: shared.originalID, testerID: member.id,
                subscriptionGroupID: subscription.subscriptionGroupID, productID: shared.productID, startDate: now)
        memberSubscription.sharedFromOriginalTransactionID = originalID
        memberSubscription.productID = shared.productID
        follow(subscription, into: &memberSubscription)
        state.subscriptions[shared.originalID] = memberSubscription
        var members = subscription.familyMembers ?? [:]
        members[member.id] = shared.originalID
        subscription.familyMembers = members
        state.subscriptions[originalID] = subscription
        let recorded = append(shared, event: .subscribed, subtype: previous == nil ? .initialBuy : .resubscribe)
        try save()
        return recorded
    }

    /// A family member's transaction for the purchaser's period `period`: free, without offer,
    /// in the member's storefront, expiring with the period.
    private func familyTransaction(
        mirroring period: SandboxTransaction, member: SandboxTester, originalID: String?, purchaseDate: Date,
        reason: TransactionReason
    ) -> SandboxTransaction {
        let id = state.takeTransactionID()
        let first = originalID.flatMap { state.transactions[$0] }
        var transaction = SandboxTransaction(
            id: id, originalID: originalID ?? id, webOrderLineItemID: state.takeWebOrderLineItemID(),
            testerID: member.id, productID: period.productID, productType: .autoRenewableSubscription,
            subscriptionGroupID: period.subscriptionGroupID, purchaseDate: purchaseDate,
            originalPurchaseDate: first?.purchaseDate ?? purchaseDate, expiresDate: period.expiresDate,
            storefront: member.storefront, storefrontID: storefrontIDs[member.storefront] ?? "",
            currency: products(period.productID, member.storefront)?.currency ?? period.currency, priceMilliunits: 0,
            reason: reason, appTransactionID: appDownload(of: member.id).appTransactionID)
        transaction.ownership = .familyShared
        return transaction
    }

    /// Copies the purchaser's renewal state into a member's shared subscription.
    private func follow(_ purchaser: SubscriptionState, into member: inout SubscriptionState) {
        member.autoRenewProductID = purchaser.autoRenewProductID
        member.autoRenewEnabled = purchaser.autoRenewEnabled
        member.billingState = purchaser.billingState
        member.gracePeriodExpiresDate = purchaser.gracePeriodExpiresDate
        member.expirationIntent = purchaser.expirationIntent
    }

    /// Gives every member the purchaser's subscription is shared with a transaction for the
    /// purchaser's new period `period` (a renewal, an upgrade or a resubscription), notified as
    /// `type` / `subtype`. Members who left (deleted testers, cleared histories) are dropped; a
    /// product without Family Sharing ends the member's share (REVOKE). `upgrade` marks each
    /// member's current transaction upgraded first.
    func shareNewPeriod(
        _ period: SandboxTransaction, type: NotificationTypeV2, subtype: NotificationSubtype?, upgrade: Bool = false
    ) {
        guard var purchaser = state.subscriptions[period.originalID], let members = purchaser.familyMembers,
            !members.isEmpty
        else { return }
        for (memberID, memberOriginalID) in members.sorted(by: { $0.key < $1.key }) {
            guard let member = state.testers[memberID], var memberSubscription = state.subscriptions[memberOriginalID],
                let current = latestTransaction(of: memberOriginalID), !current.isRevoked
            else {
                purchaser.familyMembers?[memberID] = nil
                continue
            }
            guard products(period.productID, member.storefront)?.isFamilyShareable == true else {
                purchaser.familyMembers?[memberID] = nil
                revokeShare(current)
                continue
            }
            if upgrade, !current.isUpgraded {
                var upgraded = current
                upgraded.isUpgraded = true
                state.transactions[upgraded.id] = upgraded
                noteUpdate(upgraded)
            }
            let next = familyTransaction(
                mirroring: period, member: member, originalID: memberOriginalID, purchaseDate: period.purchaseDate,
                reason: period.reason)
            follow(purchaser, into: &memberSubscription)
            memberSubscription.productID = next.productID
            state.subscriptions[memberOriginalID] = memberSubscription
            _ = append(next, event: type, subtype: subtype)
        }
        if purchaser.familyMembers?.count != members.count {
            if purchaser.familyMembers?.isEmpty == true { purchaser.familyMembers = nil }
            state.subscriptions[period.originalID] = purchaser
        }
    }

    /// Tells every member the purchaser's subscription is shared with what just happened to it
    /// (a billing failure, an expiry, auto-renewal turned on or off): each member's subscription
    /// takes the purchaser's renewal state, and `type` / `subtype` is recorded for the member's
    /// current transaction. Call it once the purchaser's new state is stored.
    func notifyFamily(of originalID: String, _ type: NotificationTypeV2, _ subtype: NotificationSubtype?) {
        guard let purchaser = state.subscriptions[originalID], let members = purchaser.familyMembers else { return }
        for (memberID, memberOriginalID) in members.sorted(by: { $0.key < $1.key }) {
            guard state.testers[memberID] != nil, var memberSubscription = state.subscriptions[memberOriginalID],
                let current = latestTransaction(of: memberOriginalID), !current.isRevoked
            else { continue }
            follow(purchaser, into: &memberSubscription)
            state.subscriptions[memberOriginalID] = memberSubscription
            record(type, subtype, current)
        }
    }

    /// Ends Family Sharing of a subscription one of whose transactions was just revoked. A member's
    /// revoked transaction (they left the family) stops the sharing with them, and their current
    /// transaction is revoked too if it was another; a purchaser's refunded transaction revokes
    /// every member's current transaction (REVOKE, `FAMILY_REVOKE`) and stops the sharing.
    func endFamilySharing(after revoked: SandboxTransaction) {
        guard revoked.productType == .autoRenewableSubscription,
            let subscription = state.subscriptions[revoked.originalID]
        else { return }
        if let purchaserOriginalID = subscription.sharedFromOriginalTransactionID {
            if var purchaser = state.subscriptions[purchaserOriginalID],
                purchaser.familyMembers?[revoked.testerID] == revoked.originalID
            {
                purchaser.familyMembers?[revoked.testerID] = nil
                if purchaser.familyMembers?.isEmpty == true { purchaser.familyMembers = nil }
                state.subscriptions[purchaserOriginalID] = purchaser
            }
            if let current = latestTransaction(of: revoked.originalID), !current.isRevoked { revokeShare(current) }
        } else if let members = subscription.familyMembers {
            state.subscriptions[revoked.originalID]?.familyMembers = nil
            for (_, memberOriginalID) in members.sorted(by: { $0.key < $1.key }) {
                if let current = latestTransaction(of: memberOriginalID), !current.isRevoked { revokeShare(current) }
            }
        }
    }

    /// Revokes a member's shared transaction: no refund, `revocationType` `FAMILY_REVOKE`, REVOKE.
    private func revokeShare(_ transaction: SandboxTransaction) {
        var revoked = transaction
        revoked.revocationDate = clock.now()
        revoked.revocationReason = .other
        revoked.revocationType = .familyRevoke
        revoked.revocationPercentage = nil
        state.transactions[revoked.id] = revoked
        noteUpdate(revoked)
        state.subscriptions[revoked.originalID]?.autoRenewEnabled = false
        record(.revoke, nil, revoked)
    }
}
