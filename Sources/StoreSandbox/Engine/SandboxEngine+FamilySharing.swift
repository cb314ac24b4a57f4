public import AppStoreModels
public import Foundation

/// Family Sharing: a purchase shared with a member of the buyer's family.
extension SandboxEngine {
    /// Shares a purchase with `member`, as Family Sharing does when the buyer's family has a new
    /// member or the buyer turns sharing on: the member gets a transaction of their own
    /// (`inAppOwnershipType` `FAMILY_SHARED`, its own transaction and original transaction IDs),
    /// which reaches their devices and is notified (ONE_TIME_CHARGE). ``revoke(_:)`` ends it
    /// (REVOKE), as when the member leaves the family.
    ///
    /// Non-consumables and non-renewing subscriptions can be shared here; the renewals of a shared
    /// auto-renewable subscription are not simulated.
    ///
    /// - Throws: ``SandboxError/Code/unknownTransaction`` or ``SandboxError/Code/unknownTester``;
    ///   ``SandboxError/Code/ineligible`` for a product without Family Sharing, a consumable, an
    ///   auto-renewable subscription, a revoked or shared purchase, or the buyer themselves.
    @discardableResult
    public func shareWithFamily(_ transactionID: String, member testerID: String) throws(SandboxError)
        -> SandboxTransaction
    {
        let purchase = try transaction(transactionID)
        let member = try tester(testerID)
        guard let product = products(purchase.productID, member.storefront), product.isFamilyShareable else {
            throw SandboxError(.ineligible, "\(purchase.productID) does not have Family Sharing on")
        }
        guard purchase.productType == .nonConsumable || purchase.productType == .nonRenewingSubscription else {
            throw SandboxError(.ineligible, "only non-consumables and non-renewing subscriptions are shared here")
        }
        guard !purchase.isRevoked, purchase.ownership != .familyShared, purchase.testerID != member.id else {
            throw SandboxError(.ineligible, "\(transactionID) cannot be shared with \(member.id)")
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
}
