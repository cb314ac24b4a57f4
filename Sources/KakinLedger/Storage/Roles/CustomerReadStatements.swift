import Foundation

/// A notification received, with what the ledger holds of its transaction, as the dashboard lists it.
private struct ReceivedNotificationRow: Decodable, Sendable {
    var notification_uuid: String
    var type: String
    var subtype: String?
    var bundle_id: String
    var transaction_id: String?
    var received_at: Int64
    var app_user_id: String?
    var revocation_date: Int64?

    static let selection = """
        n.notification_uuid, n.type, n.subtype, n.bundle_id, n.transaction_id, n.received_at,
        t.app_user_id, t.revocation_date
        """
}

/// An outbox event with its delivery to one endpoint (none yet: the endpoint's columns are `NULL`).
private struct WebhookDeliveryRow: Decodable, Sendable {
    var id: Int64
    var type: String
    var bundle_id: String
    var app_user_id: String?
    var created_at: Int64
    var endpoint: String?
    var attempts: Int?
    var last_attempt_at: Int64?
    var delivered_at: Int64?
    var next_attempt_at: Int64?
}

/// What the ledger reads of customers: their state, pages of their transactions, and the
/// dashboard's lists of notifications and deliveries; the same statements on both engines.
extension StatementEngine {
    /// The customer's transactions (by purchase date), ledger lines (in the order written) and
    /// balances, read from one snapshot.
    public func customer(bundleID: String, appUserID: String) async throws -> CustomerState {
        try await snapshot(
            .run([
                """
                SELECT \(unescaped: TransactionRow.selection()) FROM transactions
                WHERE bundle_id = \(bundleID) AND app_user_id = \(appUserID)
                ORDER BY purchase_date, recorded_at, transaction_id
                """,
                """
                SELECT \(unescaped: LedgerEntryRow.selection()) FROM ledger_entries
                WHERE bundle_id = \(bundleID) AND app_user_id = \(appUserID) ORDER BY id
                """,
                BalanceRow.all(bundleID: bundleID, appUserID: appUserID),
            ]) { rows in
                .done(
                    CustomerState(
                        bundleID: bundleID, appUserID: appUserID,
                        balances: try BalanceRow.byCurrency(rows[2]),
                        transactions: try rows[0].decode(TransactionRow.self).map { try $0.transaction() },
                        ledger: try rows[1].decode(LedgerEntryRow.self).map { try $0.entry() }))
            })
    }

    /// A page of the customer's transactions, newest first, strictly after `cursor`, through the
    /// index by customer and purchase date.
    public func transactions(
        bundleID: String, appUserID: String, limit: Int, after cursor: TransactionCursor?
    ) async throws -> [RecordedTransaction] {
        guard limit >= 0 else { throw LedgerStoreError(.invalidArgument, "limit must not be negative") }
        return try await read(
            TransactionStatements.page(
                bundleID: bundleID, appUserID: appUserID, limit: limit, before: cursor, withJWS: true),
            as: TransactionRow.self
        ).map { try $0.transaction() }
    }

    public func transaction(id: String) async throws -> RecordedTransaction? {
        try await read(
            "SELECT \(unescaped: TransactionRow.selection()) FROM transactions WHERE transaction_id = \(id)",
            as: TransactionRow.self
        ).first?.transaction()
    }

    /// The newest notifications: one customer's found from their transactions (read first, in
    /// the index by customer), the newest of all from the notifications received last.
    public func receivedNotifications(
        bundleID: String?, appUserID: String?, limit: Int
    ) async throws -> [ReceivedNotification] {
        let statement: LedgerSQL =
            if let appUserID {
                """
                SELECT \(unescaped: ReceivedNotificationRow.selection)
                FROM transactions t \(.joinInOrder) notifications n ON n.transaction_id = t.transaction_id
                \(where: ["t.app_user_id": appUserID, "t.bundle_id": bundleID])
                ORDER BY n.received_at DESC, n.notification_uuid LIMIT \(limit)
                """
            } else {
                """
                SELECT \(unescaped: ReceivedNotificationRow.selection)
                FROM notifications n LEFT JOIN transactions t ON t.transaction_id = n.transaction_id
                \(where: ["n.bundle_id": bundleID])
                ORDER BY n.received_at DESC, n.notification_uuid LIMIT \(limit)
                """
            }
        return try await read(statement, as: ReceivedNotificationRow.self).map {
            ReceivedNotification(
                notificationUUID: $0.notification_uuid, type: $0.type, subtype: $0.subtype, bundleID: $0.bundle_id,
                transactionID: $0.transaction_id, receivedAt: LedgerTime.date($0.received_at),
                appUserID: $0.app_user_id, transactionRevocationDate: $0.revocation_date.map(LedgerTime.date))
        }
    }

    /// The newest outbox events with their deliveries; events name an anonymous customer
    /// redacted, so `appUserID` is looked for redacted the same way.
    public func webhookDeliveries(bundleID: String?, appUserID: String?, limit: Int) async throws -> [WebhookDelivery] {
        try await read(
            ActivityStatements.deliveries(bundleID: bundleID, appUserID: appUserID, limit: limit),
            as: WebhookDeliveryRow.self
        ).map {
            WebhookDelivery(
                eventID: $0.id, type: $0.type, bundleID: $0.bundle_id, appUserID: $0.app_user_id,
                createdAt: LedgerTime.date($0.created_at), endpoint: $0.endpoint, attempts: $0.attempts ?? 0,
                lastAttemptAt: $0.last_attempt_at.map(LedgerTime.date),
                deliveredAt: $0.delivered_at.map(LedgerTime.date), nextAttemptAt: $0.next_attempt_at.map(LedgerTime.date))
        }
    }
}

/// What the activity lists read, where a test reads their plans.
enum ActivityStatements {
    /// The newest outbox events with their deliveries: a customer's from the index by customer,
    /// an app's (or every app's) in the events' own order, newest first.
    static func deliveries(bundleID: String?, appUserID: String?, limit: Int) -> LedgerSQL {
        let order: LedgerSQL = appUserID == nil ? "\(.index(nil))" : ""
        return """
            SELECT e.id, e.type, e.bundle_id, e.app_user_id, e.created_at,
                d.endpoint, d.attempts, d.last_attempt_at, d.delivered_at, d.next_attempt_at
            FROM events e \(order) LEFT JOIN event_deliveries d ON d.event_id = e.id
            \(where: ["e.bundle_id": bundleID, "e.app_user_id": appUserID.map(CustomerIDRedaction.redacted)])
            ORDER BY e.id DESC, d.endpoint LIMIT \(limit)
            """
    }
}

/// Statements on `transactions` that more than one role reads.
enum TransactionStatements {
    /// A page of a customer's transactions, newest first, strictly before `cursor`; with
    /// `withJWS` false their signed JWS is read as `NULL`.
    static func page(
        bundleID: String, appUserID: String, limit: Int, before cursor: TransactionCursor?, withJWS: Bool
    ) -> LedgerSQL {
        let columns = TransactionRow.selection(withJWS: withJWS)
        guard let cursor else {
            return """
                SELECT \(unescaped: columns) FROM transactions WHERE bundle_id = \(bundleID) AND app_user_id = \(appUserID)
                ORDER BY purchase_date DESC, transaction_id DESC LIMIT \(limit)
                """
        }
        return """
            SELECT \(unescaped: columns) FROM transactions
            WHERE bundle_id = \(bundleID) AND app_user_id = \(appUserID)
              AND (purchase_date < \(cursor.purchaseDate)
                   OR (purchase_date = \(cursor.purchaseDate) AND transaction_id < \(cursor.transactionID)))
            ORDER BY purchase_date DESC, transaction_id DESC LIMIT \(limit)
            """
    }
}
