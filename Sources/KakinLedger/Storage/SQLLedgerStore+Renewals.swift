import AppStoreModels
public import Foundation
import SQLKit

extension LedgerSchema {
    /// The kind of period each subscription transaction pays for (`trial`, `intro`, `offer` or
    /// `normal`, read from its offer when it is recorded; NULL for other products and for rows
    /// recorded before), and the latest renewal state of each subscription as App Store Server
    /// Notifications report it: Apple's `autoRenewStatus` and `expirationIntent`, when a billing
    /// problem was first seen and when its grace period ends, and the signing date that orders
    /// the reports.
    static let subscriptionRenewalsMigration = LedgerMigration(id: "0012_subscription_renewals") { _ in
        [
            """
            ALTER TABLE transactions ADD COLUMN period_type TEXT
            CHECK (period_type IN ('trial', 'intro', 'offer', 'normal'))
            """,
            """
            CREATE TABLE subscription_renewals (
                bundle_id TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                auto_renew_status INTEGER,
                expiration_intent INTEGER,
                billing_issue_detected_at BIGINT,
                grace_period_expires_at BIGINT,
                signed_date BIGINT NOT NULL,
                notification_uuid TEXT,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (bundle_id, original_transaction_id),
                CHECK (billing_issue_detected_at IS NOT NULL OR grace_period_expires_at IS NULL)
            )
            """,
        ]
    }
}

extension SQLLedgerStore {
    /// One upsert: a new subscription's row is inserted; a known one is replaced only when the
    /// new state was signed later (`WHERE` on the conflict), keeping the first date of a billing
    /// problem that goes on. `RETURNING` says whether a row was written.
    public func recordRenewal(_ renewal: SubscriptionRenewal) async throws -> Bool {
        try await database.raw(
            """
            INSERT INTO subscription_renewals
                (bundle_id, original_transaction_id, auto_renew_status, expiration_intent, billing_issue_detected_at,
                 grace_period_expires_at, signed_date, notification_uuid, updated_at)
            VALUES (\(bind: renewal.bundleID), \(bind: renewal.originalTransactionID), \
            \(bind: renewal.autoRenewStatus?.rawValue), \(bind: renewal.expirationIntent?.rawValue), \
            \(bind: renewal.billingIssueDetectedAt.map(LedgerTime.milliseconds)), \
            \(bind: renewal.gracePeriodExpiresAt.map(LedgerTime.milliseconds)), \
            \(bind: LedgerTime.milliseconds(renewal.signedDate)), \(bind: renewal.notificationUUID), \
            \(bind: LedgerTime.milliseconds(renewal.updatedAt)))
            ON CONFLICT (bundle_id, original_transaction_id) DO UPDATE SET
                auto_renew_status = excluded.auto_renew_status,
                expiration_intent = excluded.expiration_intent,
                billing_issue_detected_at = CASE WHEN excluded.billing_issue_detected_at IS NULL THEN NULL
                    ELSE COALESCE(subscription_renewals.billing_issue_detected_at, excluded.billing_issue_detected_at)
                    END,
                grace_period_expires_at = excluded.grace_period_expires_at,
                signed_date = excluded.signed_date,
                notification_uuid = excluded.notification_uuid,
                updated_at = excluded.updated_at
            WHERE subscription_renewals.signed_date < excluded.signed_date
            RETURNING original_transaction_id
            """
        ).row() != nil
    }

    /// One indexed read (the table's primary key) for all of `originalTransactionIDs`.
    public func subscriptionRenewals(
        bundleID: String, originalTransactionIDs: [String]
    ) async throws -> [String: SubscriptionRenewal] {
        let ids = Array(Set(originalTransactionIDs)).sorted()
        guard !ids.isEmpty else { return [:] }
        let rows = try await database.raw(
            """
            SELECT original_transaction_id, auto_renew_status, expiration_intent, billing_issue_detected_at,
                grace_period_expires_at, signed_date, notification_uuid, updated_at
            FROM subscription_renewals
            WHERE bundle_id = \(bind: bundleID) AND original_transaction_id IN (\(binds: ids))
            """
        ).rows()
        var renewals: [String: SubscriptionRenewal] = [:]
        for row in rows {
            let id = try row.decode(column: "original_transaction_id", as: String.self)
            renewals[id] = SubscriptionRenewal(
                bundleID: bundleID, originalTransactionID: id,
                autoRenewStatus: try row.optional("auto_renew_status", as: Int.self).map(
                    AutoRenewStatus.init(rawValue:)),
                expirationIntent: try row.optional("expiration_intent", as: Int.self)
                    .map(ExpirationIntent.init(rawValue:)),
                billingIssueDetectedAt: try row.optionalDate("billing_issue_detected_at"),
                gracePeriodExpiresAt: try row.optionalDate("grace_period_expires_at"),
                signedDate: try row.date("signed_date"),
                notificationUUID: try row.optional("notification_uuid", as: String.self),
                updatedAt: try row.date("updated_at"))
        }
        return renewals
    }
}
