public import AppStoreModels
import Foundation

/// The data behind the App Store Server API: history, statuses and refunds of one customer,
/// found from any of their transaction IDs, with Apple's paging (20 per page, an opaque revision).
extension SandboxEngine {
    /// How many signed transactions one page holds, as Apple's API.
    public static let pageSize = 20

    /// Which history endpoint: v1 leaves out finished consumables; v2 returns everything.
    public enum HistoryVersion: Sendable {
        /// Get Transaction History v1 (`/inApps/v1/history`) or v2 (`/inApps/v2/history`).
        case v1, v2
    }

    /// The tester a transaction ID belongs to: a `transactionId`, `originalTransactionId` or
    /// `appTransactionId`, as Apple's endpoints accept.
    public func customer(of transactionID: String) throws(SandboxError) -> String {
        if let transaction = state.transactions[transactionID]
            ?? state.transactions.first(in: .original(transactionID))
        {
            return transaction.testerID
        }
        if let (testerID, _) = state.appDownloads.first(where: { $0.value.appTransactionID == transactionID }) {
            return testerID
        }
        throw SandboxError(.unknownTransaction, "no transaction has ID \(transactionID)")
    }

    /// Get Transaction History: the customer's transactions, filtered and paged.
    public func history(
        for transactionID: String, request: TransactionHistoryRequest, version: HistoryVersion = .v2
    ) throws(SandboxError) -> HistoryResponse {
        let testerID = try customer(of: transactionID)
        var selected = transactions(of: testerID).filter { matches($0, request) }
        if version == .v1 { selected.removeAll { $0.productType == .consumable && $0.isFinished } }
        selected.sort { ($0.purchaseDate, $0.id) < ($1.purchaseDate, $1.id) }
        if request.sort == .descending { selected.reverse() }
        let page = try self.page(selected, revision: request.revision)
        return HistoryResponse(
            revision: page.revision, hasMore: page.hasMore, bundleID: signer.bundleID, appAppleID: signer.appAppleID,
            environment: .sandbox, signedTransactions: try sign(page.items))
    }

    /// Get All Subscription Statuses: the latest transaction of each of the customer's
    /// subscriptions, grouped by subscription group, optionally only those with given statuses.
    public func subscriptionStatuses(
        for transactionID: String, statuses: Set<SubscriptionStatus> = []
    )
        throws(SandboxError) -> StatusResponse
    {
        let testerID = try customer(of: transactionID)
        var groups: [String: [LastTransactionsItem]] = [:]
        for subscription in state.subscriptions.values.filter({ $0.testerID == testerID })
            .sorted(by: { $0.originalTransactionID < $1.originalTransactionID })
        {
            guard let latest = latestTransaction(of: subscription.originalTransactionID) else { continue }
            let status = try status(originalTransactionID: subscription.originalTransactionID)
            guard statuses.isEmpty || statuses.contains(status) else { continue }
            let renewal = try renewalInfo(originalTransactionID: subscription.originalTransactionID)
            let now = clock.now()
            do {
                groups[subscription.subscriptionGroupID, default: []].append(
                    LastTransactionsItem(
                        status: status, originalTransactionID: subscription.originalTransactionID,
                        signedTransactionInfo: try signer.signTransaction(latest, at: now),
                        signedRenewalInfo: try signer.signRenewalInfo(renewal, at: now)))
            } catch {
                throw SandboxError(.stateUnavailable, "cannot sign: \(error)")
            }
        }
        return StatusResponse(
            environment: .sandbox, bundleID: signer.bundleID, appAppleID: signer.appAppleID,
            data: groups.keys.sorted().map {
                SubscriptionGroupIdentifierItem(subscriptionGroupIdentifier: $0, lastTransactions: groups[$0])
            })
    }

    /// Get Refund History: the customer's refunded and revoked transactions, paged.
    public func refundHistory(
        for transactionID: String, revision: String? = nil
    ) throws(SandboxError)
        -> RefundHistoryResponse
    {
        let testerID = try customer(of: transactionID)
        let refunded = transactions(of: testerID).filter(\.isRevoked)
            .sorted { ($0.revocationDate ?? .distantPast, $0.id) < ($1.revocationDate ?? .distantPast, $1.id) }
        let page = try page(refunded, revision: revision)
        return RefundHistoryResponse(
            signedTransactions: try sign(page.items), revision: page.revision, hasMore: page.hasMore)
    }

    private func matches(_ transaction: SandboxTransaction, _ request: TransactionHistoryRequest) -> Bool {
        if let start = request.startDate, transaction.purchaseDate < start { return false }
        if let end = request.endDate, transaction.purchaseDate >= end { return false }
        if let ids = request.productIDs, !ids.isEmpty, !ids.contains(transaction.productID) { return false }
        if let types = request.productTypes, !types.isEmpty, !types.contains(Self.historyType(transaction.productType))
        {
            return false
        }
        if let groups = request.subscriptionGroupIdentifiers, !groups.isEmpty {
            guard let group = transaction.subscriptionGroupID, groups.contains(group) else { return false }
        }
        if let ownership = request.inAppOwnershipType, ownership != .purchased { return false }
        if let revoked = request.revoked, revoked != transaction.isRevoked { return false }
        return true
    }

    private static func historyType(_ type: ProductType) -> TransactionHistoryRequest.ProductType {
        switch type {
        case .autoRenewableSubscription: .autoRenewable
        case .nonRenewingSubscription: .nonRenewable
        case .consumable: .consumable
        default: .nonConsumable
        }
    }

    /// One page, with a revision that points at the next one. Revisions are opaque to clients.
    private func page(
        _ items: [SandboxTransaction], revision: String?
    ) throws(SandboxError)
        -> (items: [SandboxTransaction], revision: String, hasMore: Bool)
    {
        var offset = 0
        if let revision {
            guard let data = Data(base64Encoded: revision), let text = String(data: data, encoding: .utf8),
                text.hasPrefix("kakin:"), let value = Int(text.dropFirst("kakin:".count)), value >= 0
            else { throw SandboxError(.invalidRequest, "the revision \(revision) was not issued by this sandbox") }
            offset = value
        }
        let end = min(items.count, offset + Self.pageSize)
        let slice = offset < end ? Array(items[offset..<end]) : []
        let next = Data("kakin:\(max(end, offset))".utf8).base64EncodedString()
        return (slice, next, end < items.count)
    }

    private func sign(_ transactions: [SandboxTransaction]) throws(SandboxError) -> [String] {
        let now = clock.now()
        do { return try transactions.map { try signer.signTransaction($0, at: now) } } catch {
            throw SandboxError(.stateUnavailable, "cannot sign: \(error)")
        }
    }
}

extension SandboxEngine {
    /// The tester's signed `AppTransaction` (Get App Transaction Info).
    public func signedAppTransaction(for testerID: String) throws(SandboxError) -> String {
        _ = try tester(testerID)
        let download = appDownload(of: testerID)
        do {
            let jws = try signer.signAppTransaction(
                appTransactionID: download.appTransactionID, originalPurchaseDate: download.originalPurchaseDate,
                at: clock.now())
            try save()
            return jws
        } catch let error as SandboxError {
            throw error
        } catch {
            throw SandboxError(.stateUnavailable, "cannot sign the app transaction: \(error)")
        }
    }
}
