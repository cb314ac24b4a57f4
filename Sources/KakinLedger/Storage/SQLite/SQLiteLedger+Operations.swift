public import AppStoreModels
public import Foundation
import GRDB
import KakinWire

/// Hosted content, the dashboard's reads and sessions, failed sign-ins, offers, calls owed to
/// Apple, app downloads and subscription renewals.
extension SQLiteLedger {
    // MARK: Dashboard reads

    // The overview's figures and the customers page: SQLiteLedger+Figures.swift.

    public func receivedNotifications(
        bundleID: String?, appUserID: String?, limit: Int
    ) async throws -> [ReceivedNotification] {
        try await read { db in
            // One customer's are found from their transactions (`CROSS JOIN` keeps that order), the
            // newest of all from the notifications received last.
            let from: String
            let (filter, arguments): (String, StatementArguments)
            if appUserID == nil {
                from = "notifications n LEFT JOIN transactions t ON t.transaction_id = n.transaction_id"
                (filter, arguments) = Database.filter([("n.bundle_id", bundleID)])
            } else {
                from = "transactions t CROSS JOIN notifications n ON n.transaction_id = t.transaction_id"
                (filter, arguments) = Database.filter([("t.bundle_id", bundleID), ("t.app_user_id", appUserID)])
            }
            return try db.rows(
                """
                SELECT n.notification_uuid, n.type, n.subtype, n.bundle_id, n.transaction_id, n.received_at,
                       t.app_user_id, t.revocation_date
                FROM \(from) \(filter) ORDER BY n.received_at DESC, n.notification_uuid LIMIT ?
                """, arguments + [limit]
            ).map { row in
                ReceivedNotification(
                    notificationUUID: try row.value("notification_uuid"),
                    type: try row.value("type"), subtype: try row.value("subtype"),
                    bundleID: try row.value("bundle_id"),
                    transactionID: try row.value("transaction_id"), receivedAt: try row.date("received_at"),
                    appUserID: try row.value("app_user_id"),
                    transactionRevocationDate: try row.optionalDate("revocation_date"))
            }
        }
    }

    public func webhookDeliveries(bundleID: String?, appUserID: String?, limit: Int) async throws -> [WebhookDelivery] {
        try await read { db in
            // Events name an anonymous customer redacted.
            let (filter, arguments) = Database.filter([
                ("e.bundle_id", bundleID), ("e.app_user_id", appUserID.map(CustomerIDRedaction.redacted)),
            ])
            return try db.rows(
                """
                SELECT e.id, e.type, e.bundle_id, e.app_user_id, e.created_at,
                       d.endpoint, d.attempts, d.last_attempt_at, d.delivered_at, d.next_attempt_at
                FROM events e LEFT JOIN event_deliveries d ON d.event_id = e.id
                \(filter) ORDER BY e.id DESC, d.endpoint LIMIT ?
                """, arguments + [limit]
            ).map { row in
                WebhookDelivery(
                    eventID: try row.value("id"), type: try row.value("type"),
                    bundleID: try row.value("bundle_id"), appUserID: try row.value("app_user_id"),
                    createdAt: try row.date("created_at"), endpoint: try row.value("endpoint"),
                    attempts: try row.value("attempts", Int?.self) ?? 0,
                    lastAttemptAt: try row.optionalDate("last_attempt_at"),
                    deliveredAt: try row.optionalDate("delivered_at"),
                    nextAttemptAt: try row.optionalDate("next_attempt_at"))
            }
        }
    }
}
