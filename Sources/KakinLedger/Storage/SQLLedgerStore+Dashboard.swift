public import Foundation
import SQLKit

/// The reads behind the dashboard's pages, and the reconciliation runs it shows.
extension SQLLedgerStore {
    public func transactions(
        bundleID: String, touching start: Date, before end: Date
    ) async throws -> [RecordedTransaction] {
        let from = LedgerTime.milliseconds(start)
        let to = LedgerTime.milliseconds(end)
        return try await reading { db in
            try await db.raw(
                """
                SELECT \(unsafeRaw: LedgerRows.transactionColumns) FROM transactions
                WHERE bundle_id = \(bind: bundleID) AND purchase_date < \(bind: to)
                AND (purchase_date >= \(bind: from) OR expires_date >= \(bind: from) OR revocation_date >= \(bind: from))
                ORDER BY purchase_date, transaction_id
                """
            ).all().map(LedgerRows.transaction)
        }
    }

    public func findCustomers(matching query: String, limit: Int) async throws -> [CustomerMatch] {
        let like = dialect.caseInsensitiveLike
        let pattern = LedgerSQLDialect.likePrefix(query)
        let rows = try await reading { db in
            try await db.raw(
                """
                SELECT bundle_id, app_user_id, COUNT(*) AS transaction_count, MAX(purchase_date) AS last_purchase
                FROM transactions
                WHERE app_user_id IS NOT NULL
                AND (app_user_id \(unsafeRaw: like) \(bind: pattern) ESCAPE '\\'
                     OR transaction_id = \(bind: query) OR original_transaction_id = \(bind: query))
                GROUP BY bundle_id, app_user_id
                ORDER BY last_purchase DESC, app_user_id
                LIMIT \(bind: limit)
                """
            ).all()
        }
        return try rows.map { row in
            CustomerMatch(
                bundleID: try row.decode(column: "bundle_id", as: String.self),
                appUserID: try row.decode(column: "app_user_id", as: String.self),
                transactionCount: try row.decode(column: "transaction_count", as: Int.self),
                lastPurchaseDate: try row.date("last_purchase"))
        }
    }

    public func receivedNotifications(
        bundleID: String?, appUserID: String?, limit: Int
    ) async throws -> [ReceivedNotification] {
        let rows = try await reading { db in
            var query: SQLQueryString = """
                SELECT n.notification_uuid, n.type, n.subtype, n.bundle_id, n.transaction_id, n.received_at,
                       t.app_user_id, t.revocation_date
                FROM notifications n LEFT JOIN transactions t ON t.transaction_id = n.transaction_id
                WHERE 1 = 1
                """
            if let bundleID { query += " AND n.bundle_id = \(bind: bundleID)" }
            if let appUserID { query += " AND t.app_user_id = \(bind: appUserID)" }
            query += " ORDER BY n.received_at DESC, n.notification_uuid LIMIT \(bind: limit)"
            return try await db.raw(query).all()
        }
        return try rows.map { row in
            ReceivedNotification(
                notificationUUID: try row.decode(column: "notification_uuid", as: String.self),
                type: try row.decode(column: "type", as: String.self),
                subtype: try row.optional("subtype", as: String.self),
                bundleID: try row.decode(column: "bundle_id", as: String.self),
                transactionID: try row.optional("transaction_id", as: String.self),
                receivedAt: try row.date("received_at"),
                appUserID: try row.optional("app_user_id", as: String.self),
                transactionRevocationDate: try row.optionalDate("revocation_date"))
        }
    }

    public func webhookDeliveries(
        bundleID: String?, appUserID: String?, limit: Int
    ) async throws -> [WebhookDelivery] {
        let rows = try await reading { db in
            var query: SQLQueryString = """
                SELECT e.id, e.type, e.bundle_id, e.app_user_id, e.created_at,
                       d.endpoint, d.attempts, d.last_attempt_at, d.delivered_at, d.next_attempt_at
                FROM events e LEFT JOIN event_deliveries d ON d.event_id = e.id
                WHERE 1 = 1
                """
            if let bundleID { query += " AND e.bundle_id = \(bind: bundleID)" }
            if let appUserID { query += " AND e.app_user_id = \(bind: appUserID)" }
            query += " ORDER BY e.id DESC, d.endpoint LIMIT \(bind: limit)"
            return try await db.raw(query).all()
        }
        return try rows.map { row in
            WebhookDelivery(
                eventID: try row.decode(column: "id", as: Int64.self),
                type: try row.decode(column: "type", as: String.self),
                bundleID: try row.decode(column: "bundle_id", as: String.self),
                appUserID: try row.optional("app_user_id", as: String.self),
                createdAt: try row.date("created_at"),
                endpoint: try row.optional("endpoint", as: String.self),
                attempts: try row.optional("attempts", as: Int.self) ?? 0,
                lastAttemptAt: try row.optionalDate("last_attempt_at"),
                deliveredAt: try row.optionalDate("delivered_at"),
                nextAttemptAt: try row.optionalDate("next_attempt_at"))
        }
    }

    public func recordReconciliation(_ run: ReconciliationRun) async throws {
        try await writing { db in
            try await db.raw(
                """
                INSERT INTO reconciliation_runs
                    (bundle_id, started_at, finished_at, transactions_seen, transactions_recorded,
                     transactions_revoked, failure)
                VALUES (\(bind: run.bundleID), \(bind: LedgerTime.milliseconds(run.startedAt)), \
                \(bind: LedgerTime.milliseconds(run.finishedAt)), \(bind: run.transactionsSeen), \
                \(bind: run.transactionsRecorded), \(bind: run.transactionsRevoked), \(bind: run.failure))
                """
            ).run()
        }
    }

    public func reconciliationRuns(limit: Int) async throws -> [ReconciliationRun] {
        let rows = try await reading { db in
            try await db.raw(
                """
                SELECT bundle_id, started_at, finished_at, transactions_seen, transactions_recorded,
                       transactions_revoked, failure
                FROM reconciliation_runs ORDER BY id DESC LIMIT \(bind: limit)
                """
            ).all()
        }
        return try rows.map { row in
            ReconciliationRun(
                bundleID: try row.decode(column: "bundle_id", as: String.self),
                startedAt: try row.date("started_at"), finishedAt: try row.date("finished_at"),
                transactionsSeen: try row.decode(column: "transactions_seen", as: Int.self),
                transactionsRecorded: try row.decode(column: "transactions_recorded", as: Int.self),
                transactionsRevoked: try row.decode(column: "transactions_revoked", as: Int.self),
                failure: try row.optional("failure", as: String.self))
        }
    }
}
