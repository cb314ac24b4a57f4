import AppStoreModels
import Foundation

@testable import KakinLedger

/// The notifications ``InMemoryLedger`` received, and what they say of subscriptions: their
/// renewal state, and the periods that ended with nothing recorded since.
extension InMemoryLedger {
    public func recordNotification(
        uuid: String, type: String, subtype: String?, bundleID: String, transactionID: String?, signedPayload: String,
        receivedAt: Date
    ) async throws -> Bool {
        guard notifications[uuid] == nil else { return false }
        notifications[uuid] = ReceivedNotification(
            notificationUUID: uuid, type: type, subtype: subtype, bundleID: bundleID, transactionID: transactionID,
            receivedAt: stored(receivedAt), appUserID: nil, transactionRevocationDate: nil)
        return true
    }

    /// The newest notifications, each with the owner and revocation of its transaction: one
    /// customer's found through their transactions (of one app when `bundleID` is given), or all
    /// of an app's (every app's without `bundleID`).
    public func receivedNotifications(
        bundleID: String?, appUserID: String?, limit: Int
    ) async throws -> [ReceivedNotification] {
        let found = notifications.values.compactMap { notification -> ReceivedNotification? in
            var notification = notification
            let row = notification.transactionID.flatMap { transactions[$0] }
            notification.appUserID = row?.appUserID
            notification.transactionRevocationDate = row?.revocationDate.map(LedgerTime.date)
            let app = appUserID == nil ? notification.bundleID : row?.bundleID
            guard bundleID == nil || app == bundleID, appUserID == nil || row?.appUserID == appUserID else {
                return nil
            }
            return notification
        }
        return Array(
            found.sorted {
                ($1.receivedAt, $0.notificationUUID) < ($0.receivedAt, $1.notificationUUID)
            }.prefix(max(limit, 0)))
    }

    // MARK: Subscriptions

    /// Keeps the state signed latest, and the first date of a billing problem that goes on (the
    /// engines' upsert). A grace period it reports is kept for the metrics whatever the state
    /// (``recordGrace(of:)``).
    public func recordRenewal(_ renewal: SubscriptionRenewal) async throws -> Bool {
        let key = AppKey(bundleID: renewal.bundleID, id: renewal.originalTransactionID)
        recordGrace(of: renewal)
        var row = SubscriptionRenewalRow(renewal)
        if let held = renewals[key] {
            guard held.signedDate < row.signedDate else { return false }
            if row.billingIssueDetectedAt != nil {
                row.billingIssueDetectedAt = held.billingIssueDetectedAt ?? row.billingIssueDetectedAt
            }
        }
        renewals[key] = row
        return true
    }

    /// Keeps the grace period a renewal state reports as the engines keep it in `metric_grace`:
    /// once per end, the expiry of the period it runs from added when a later report names it.
    private func recordGrace(of renewal: SubscriptionRenewal) {
        guard let end = renewal.gracePeriodExpiresAt.map(LedgerTime.milliseconds) else { return }
        let key = AppKey(bundleID: renewal.bundleID, id: renewal.originalTransactionID)
        let period = renewal.periodExpiresAt.map(LedgerTime.milliseconds)
        var kept = graceExpiries[key] ?? []
        if let index = kept.firstIndex(where: { $0.expiresAt == end }) {
            if kept[index].periodExpiresAt == nil { kept[index].periodExpiresAt = period }
        } else {
            kept.append(MetricGrace(expiresAt: end, periodExpiresAt: period))
        }
        graceExpiries[key] = kept
    }

    public func subscriptionRenewals(
        bundleID: String, originalTransactionIDs: [String]
    ) async throws -> [String: SubscriptionRenewal] {
        Dictionary(
            Set(originalTransactionIDs).compactMap { id in
                renewals[AppKey(bundleID: bundleID, id: id)].map { (id, $0.renewal) }
            }, uniquingKeysWith: { first, _ in first })
    }

    /// The engines' query, plainly: unrevoked transactions of the app and environment whose period
    /// ended in the window after the cursor, with no transaction of the same purchase ending later
    /// and no renewal state signed at or after their end.
    public func lapsedSubscriptions(
        bundleID: String, environment: AppStoreEnvironment, endedFrom start: Date, before end: Date,
        after cursor: LapsedSubscription?, limit: Int
    ) async throws -> [LapsedSubscription] {
        let from = LedgerTime.milliseconds(cursor?.expiresDate ?? start)
        let (end, after) = (LedgerTime.milliseconds(end), cursor?.transactionID ?? "")
        let lapsed = transactions.values.filter { row in
            guard let expires = row.expiresDate, row.bundleID == bundleID, row.environment == environment.rawValue,
                expires >= from, expires < end, expires > from || row.transactionID > after, row.revocationDate == nil
            else { return false }
            let original = row.originalTransactionID
            let endsLater = transactions.values.contains {
                $0.originalTransactionID == original && $0.expiresDate ?? .min > expires
            }
            let signedSince = renewals[AppKey(bundleID: bundleID, id: original)].map { $0.signedDate >= expires }
            return !endsLater && signedSince != true
        }
        return lapsed.sorted { ($0.expiresDate ?? 0, $0.transactionID) < ($1.expiresDate ?? 0, $1.transactionID) }
            .prefix(max(limit, 0)).map {
                LapsedSubscription(
                    originalTransactionID: $0.originalTransactionID, transactionID: $0.transactionID,
                    expiresDate: LedgerTime.date($0.expiresDate ?? 0))
            }
    }
}
