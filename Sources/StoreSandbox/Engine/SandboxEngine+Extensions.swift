public import AppStoreModels
public import Foundation

/// Renewal date extensions, consumption information and order lookup: the remaining App Store
/// Server API operations.
extension SandboxEngine {
    /// Extend a Subscription Renewal Date: moves the current period's end by `days` (1–90), at most
    /// twice in 365 days, for an active subscription; records RENEWAL_EXTENDED.
    public func extendRenewalDate(
        originalTransactionID: String, days: Int
    ) throws(SandboxError)
        -> ExtendRenewalDateResponse
    {
        guard (1...90).contains(days) else { throw SandboxError(.invalidRequest, "extendByDays must be 1 to 90") }
        guard state.subscriptions[originalTransactionID] != nil,
            var latest = latestTransaction(of: originalTransactionID)
        else { throw SandboxError(.unknownTransaction, "no subscription has original ID \(originalTransactionID)") }
        let now = clock.now()
        guard !latest.isRevoked, let expires = latest.expiresDate, expires > now else {
            throw SandboxError(.ineligible, "only an active subscription can be extended")
        }
        let recent = (state.extensions[originalTransactionID] ?? []).filter { now.timeIntervalSince($0) < 365 * 86_400 }
        guard recent.count < 2 else { throw SandboxError(.limitReached, "at most two extensions in 365 days") }
        let newExpiry = expires.addingTimeInterval(Double(days) * 86_400)
        latest.expiresDate = newExpiry
        state.transactions[latest.id] = latest
        state.extensions[originalTransactionID, default: []].append(now)
        noteUpdate(latest)
        record(.renewalExtended, nil, latest)
        try save()
        return ExtendRenewalDateResponse(
            originalTransactionID: originalTransactionID, webOrderLineItemID: latest.webOrderLineItemID, success: true,
            effectiveDate: newExpiry)
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers of a product in the given
    /// storefronts (all when empty). Runs at once; its status is kept under the request identifier,
    /// and when done the App Store sends RENEWAL_EXTENSION / SUMMARY with the counts.
    public func massExtendRenewalDate(
        productID: String, days: Int, requestIdentifier: String, storefronts: [String] = []
    ) throws(SandboxError) -> MassExtendRenewalDateStatusResponse {
        guard (1...90).contains(days) else { throw SandboxError(.invalidRequest, "extendByDays must be 1 to 90") }
        let key = "\(productID)/\(requestIdentifier)"
        if let existing = state.massExtensions[key] { return existing }
        let now = clock.now()
        var succeeded: Int64 = 0
        var failed: Int64 = 0
        for (originalID, subscription) in state.subscriptions.sorted(by: { $0.key < $1.key })
        where subscription.productID == productID {
            guard let latest = latestTransaction(of: originalID),
                storefronts.isEmpty || storefronts.contains(latest.storefront),
                latest.expiresDate.map({ $0 > now }) == true
            else { continue }
            do {
                _ = try extendRenewalDate(originalTransactionID: originalID, days: days)
                succeeded += 1
            } catch {
                failed += 1
            }
        }
        let status = MassExtendRenewalDateStatusResponse(
            requestIdentifier: requestIdentifier, complete: true, completeDate: now, succeededCount: succeeded,
            failedCount: failed)
        state.massExtensions[key] = status
        state.events.append(
            SandboxEvent(
                notificationType: .renewalExtension, subtype: .summary, transactionID: "", testerID: "", date: now,
                summary: Summary(
                    environment: .sandbox, appAppleID: signer.appAppleID, bundleID: signer.bundleID,
                    productID: productID, requestIdentifier: requestIdentifier,
                    storefrontCountryCodes: storefronts.isEmpty ? nil : storefronts, succeededCount: succeeded,
                    failedCount: failed)))
        try save()
        return status
    }

    /// Get Status of Subscription Renewal Date Extensions.
    public func massExtensionStatus(
        productID: String, requestIdentifier: String
    ) throws(SandboxError)
        -> MassExtendRenewalDateStatusResponse
    {
        guard let status = state.massExtensions["\(productID)/\(requestIdentifier)"] else {
            throw SandboxError(.unknownTransaction, "no mass extension \(requestIdentifier) for \(productID)")
        }
        return status
    }

    /// Records a CONSUMPTION_REQUEST: the customer asked for a refund of a consumable, and the
    /// developer is invited to send consumption information.
    public func requestConsumptionInformation(transactionID: String) throws(SandboxError) {
        let transaction = try transaction(transactionID)
        guard transaction.productType == .consumable || transaction.productType == .autoRenewableSubscription else {
            throw SandboxError(.ineligible, "consumption information applies to consumables and subscriptions")
        }
        record(.consumptionRequest, nil, transaction)
        try save()
    }

    /// Send Consumption Information: keeps what the developer reported for a transaction.
    public func reportConsumption(transactionID: String, _ report: ConsumptionRequest) throws(SandboxError) {
        let transaction = try transaction(transactionID)
        guard transaction.productType == .consumable || transaction.productType == .autoRenewableSubscription else {
            throw SandboxError(.ineligible, "\(transactionID) is not a consumable")
        }
        state.consumptionReports[transactionID] = report
        try save()
    }

    /// Look Up Order ID: the transactions of an order, or none (status 1) for an unknown order.
    public func lookUpOrder(_ orderID: String) -> [SandboxTransaction] {
        state.transactions.records(in: .order(orderID))
    }
}

extension SandboxEngine {
    /// Set App Account Token: attaches `token` to the purchase with this original transaction ID
    /// (every transaction of it, renewals included).
    ///
    /// - Throws: ``SandboxError/Code/unknownTransaction`` for an ID that is not a purchase's
    ///   original transaction ID, ``SandboxError/Code/ineligible`` for a purchase shared by Family
    ///   Sharing (Apple refuses those).
    public func setAppAccountToken(_ token: UUID, originalTransactionID: String) throws(SandboxError) {
        guard let first = state.transactions.first(in: .original(originalTransactionID)) else {
            throw SandboxError(.unknownTransaction, "no purchase has original transaction ID \(originalTransactionID)")
        }
        guard first.ownership != .familyShared else {
            throw SandboxError(.ineligible, "\(originalTransactionID) was shared by Family Sharing")
        }
        state.transactions.update(in: .original(originalTransactionID)) {
            $0.appAccountToken = token.uuidString.lowercased()
        }
        try save()
    }

    /// Finish Transaction (server side): marks a transaction finished, as the device would.
    public func finishFromServer(_ transactionID: String) throws(SandboxError) {
        let transaction = try transaction(transactionID)
        try finish(transactionID, testerID: transaction.testerID)
    }
}
