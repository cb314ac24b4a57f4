public import Foundation
import GRDB

/// Aliases and the webhooks outbox.
extension SQLiteLedger {
    // MARK: Aliases

    /// Aliases an anonymous customer in one write (see ``LedgerStore/alias(bundleID:anonymousID:to:transfersOwnership:at:)``):
    /// nothing at all when the app's ledger has never seen the anonymous ID; otherwise the alias
    /// row (`ON CONFLICT DO NOTHING`), the purchases another identified customer holds part of
    /// (moved or kept by `transfersOwnership`), then the anonymous customer's transactions,
    /// balances (added), ledger lines and app downloads, and a `customer.aliased` event when
    /// anything changed.
    public func alias(
        bundleID: String, anonymousID: String, to appUserID: String, transfersOwnership: Bool, at date: Date
    ) async throws -> CustomerAliasOutcome {
        try LedgerRules.validateAlias(anonymousID, to: appUserID)
        let now = LedgerTime.milliseconds(date)
        return try await write { db in
            let seen = try db.row(
                LedgerSchema.anonymousCustomerSeen(app: ":app", customer: ":customer"),
                ["app": bundleID, "customer": anonymousID])?.value("seen", Bool.self)
            guard seen == true else { return CustomerAliasOutcome.aliased(CustomerAliasMove(created: false)) }
            let created =
                try db.run(
                    """
                    INSERT INTO customer_aliases (bundle_id, alias, app_user_id, created_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (bundle_id, alias) DO NOTHING
                    """, [bundleID, anonymousID, appUserID, now]) > 0
            if !created {
                guard let target = try Self.aliasTarget(bundleID: bundleID, anonymousID: anonymousID, db) else {
                    throw LedgerStoreError(.inconsistentState, "the alias of \(anonymousID) vanished")
                }
                guard target == appUserID else { return CustomerAliasOutcome.aliasedToAnotherCustomer(target) }
            }
            var move = CustomerAliasMove(created: created)
            let shared = try db.rows(
                """
                SELECT DISTINCT other.original_transaction_id, other.app_user_id
                FROM transactions other
                JOIN transactions own
                  ON own.original_transaction_id = other.original_transaction_id AND own.bundle_id = other.bundle_id
                WHERE other.bundle_id = ? AND own.app_user_id = ?
                  AND other.app_user_id IS NOT NULL AND other.app_user_id <> own.app_user_id AND other.app_user_id <> ?
                """, [bundleID, anonymousID, appUserID]
            ).map { row -> (String, String) in
                (try row.value("original_transaction_id"), try row.value("app_user_id"))
            }
            for (original, owner) in shared.sorted(by: { $0 < $1 }) {
                if transfersOwnership {
                    let moved = try Self.transfer(
                        bundleID: bundleID, originalTransactionID: original, from: owner, to: appUserID, at: now, db)
                    if moved > 0 { move.transferredPurchases.append(original) }
                } else {
                    move.keptPurchases.append(original)
                }
            }
            let customers: StatementArguments = [appUserID, bundleID, anonymousID]
            let moved = try TransactionRow.fetchAll(
                db.cachedStatement(
                    sql: """
                        UPDATE transactions SET app_user_id = ? WHERE bundle_id = ? AND app_user_id = ?
                        RETURNING \(TransactionRow.selection())
                        """), arguments: customers)
            move.transactionIDs = moved.map(\.transactionID).sorted()
            var metrics = PurchaseMetricChanges()
            metrics.move(moved, from: anonymousID)
            try Self.apply(metrics, db)
            move.balances = try Self.balances(bundleID: bundleID, appUserID: anonymousID, db)
            if !move.balances.isEmpty {
                try db.run(
                    """
                    INSERT INTO balances (app_user_id, bundle_id, currency, amount)
                    SELECT ?, bundle_id, currency, amount FROM balances WHERE bundle_id = ? AND app_user_id = ?
                    ON CONFLICT (bundle_id, app_user_id, currency) DO UPDATE SET amount = balances.amount + excluded.amount
                    """, customers)
                try db.run("DELETE FROM balances WHERE bundle_id = ? AND app_user_id = ?", [bundleID, anonymousID])
            }
            try db.run("UPDATE ledger_entries SET app_user_id = ? WHERE bundle_id = ? AND app_user_id = ?", customers)
            try db.run("UPDATE app_transactions SET app_user_id = ? WHERE bundle_id = ? AND app_user_id = ?", customers)
            if move.changedAnything {
                try Self.appendEvent(
                    LedgerEventType.customerAliased, bundleID: bundleID, appUserID: appUserID,
                    payload: AliasEventPayload(alias: anonymousID, appUserId: appUserID, move: move), at: now, db)
            }
            return CustomerAliasOutcome.aliased(move)
        }
    }

    private static func aliasTarget(bundleID: String, anonymousID: String, _ db: Database) throws -> String? {
        try db.row(
            "SELECT app_user_id FROM customer_aliases WHERE bundle_id = ? AND alias = ?", [bundleID, anonymousID])?
            .value("app_user_id")
    }

    // MARK: Webhooks outbox

    /// Counts the failed attempts waiting for their retry (from the index of due retries) and the
    /// events above the endpoint's mark that were never attempted.
    public func undeliveredEventCount(endpoint: String) async throws -> Int {
        try await read { db in
            try db.row(
                """
                SELECT (SELECT COUNT(*) FROM event_deliveries
                        WHERE endpoint = :endpoint AND next_attempt_at IS NOT NULL AND delivered_at IS NULL)
                     + (SELECT COUNT(*) FROM events e
                        WHERE \(Self.neverAttempted))
                    AS n
                """, ["endpoint": endpoint])?.value("n") ?? 0
        }
    }

    /// The events `e` at or above the endpoint's mark (`:endpoint`; every event below it was
    /// attempted at least once) that were never attempted.
    private static let neverAttempted = """
        e.id >= (SELECT COALESCE(MAX(attempted_below), 0) FROM event_cursors WHERE endpoint = :endpoint)
        AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = e.id AND d.endpoint = :endpoint)
        """

    /// Takes the due events for `endpoint` that no one holds, leased until `leaseUntil`, oldest
    /// first, in one write: a lease is written for each due event unless a live one exists, and
    /// only the events whose lease this call wrote are returned.
    public func claimDueEvents(endpoint: String, now: Date, limit: Int, leaseUntil: Date) async throws -> [LedgerEvent]
    {
        guard limit > 0 else { return [] }
        let current = LedgerTime.milliseconds(now)
        let until = LedgerTime.milliseconds(leaseUntil)
        guard until > current else { throw LedgerStoreError(.invalidArgument, "a lease must end after now") }
        return try await write { db in
            // Failed attempts whose retry is due, and events above the mark never attempted; each
            // read only as far as its limit, and neither held by a live lease.
            let candidates = try db.rows(
                """
                SELECT id FROM (
                    SELECT * FROM (
                        SELECT d.event_id AS id FROM event_deliveries d
                        WHERE d.endpoint = :endpoint AND d.next_attempt_at <= :now AND d.delivered_at IS NULL
                          AND NOT EXISTS (\(Self.liveLease("d.event_id")))
                        ORDER BY d.next_attempt_at LIMIT :limit)
                    UNION ALL
                    SELECT * FROM (
                        SELECT e.id FROM events e
                        WHERE \(Self.neverAttempted)
                          AND NOT EXISTS (\(Self.liveLease("e.id")))
                        ORDER BY e.id LIMIT :limit))
                ORDER BY id LIMIT :limit
                """, ["endpoint": endpoint, "now": current, "limit": limit]
            ).map { try $0.value("id", Int64.self) }
            guard !candidates.isEmpty else { return [LedgerEvent]() }
            let leased = try Row.fetchAll(
                db,
                sql: """
                    INSERT INTO event_leases (event_id, endpoint, leased_until)
                    SELECT id, ?, ? FROM events WHERE id IN (\(Database.placeholders(candidates.count)))
                    ON CONFLICT (event_id, endpoint) DO UPDATE SET leased_until = excluded.leased_until
                    WHERE event_leases.leased_until <= ?
                    RETURNING event_id
                    """,
                arguments: StatementArguments(
                    [endpoint, until] + candidates.map { $0 as any DatabaseValueConvertible } + [current])
            ).map { try $0.value("event_id", Int64.self) }
            guard !leased.isEmpty else { return [] }
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT id, type, bundle_id, app_user_id, payload, created_at FROM events
                    WHERE id IN (\(Database.placeholders(leased.count))) ORDER BY id
                    """, arguments: StatementArguments(leased)
            ).map { row in
                LedgerEvent(
                    id: try row.value("id"), type: try row.value("type"),
                    bundleID: try row.value("bundle_id"), appUserID: try row.value("app_user_id"),
                    payload: Data(try row.value("payload", String.self).utf8), createdAt: try row.date("created_at"))
            }
        }
    }

    /// Records the delivery attempts of a batch to `endpoint` in one write, and releases their
    /// leases. Attempts are counted; once delivered, an event stays delivered; a failure is tried
    /// again at its `retryAt`, or given up without one. An unknown event is refused by the
    /// foreign key.
    public func markDeliveries(_ attempts: [DeliveryAttempt], endpoint: String) async throws {
        guard !attempts.isEmpty else { return }
        try await write { db in
            for attempt in attempts {
                let attemptedAt = LedgerTime.milliseconds(attempt.date)
                try db.run(
                    """
                    INSERT INTO event_deliveries
                        (event_id, endpoint, attempts, last_attempt_at, delivered_at, next_attempt_at)
                    VALUES (?, ?, 1, ?, ?, ?)
                    ON CONFLICT (event_id, endpoint) DO UPDATE SET
                        attempts = event_deliveries.attempts + 1,
                        last_attempt_at = excluded.last_attempt_at,
                        delivered_at = COALESCE(event_deliveries.delivered_at, excluded.delivered_at),
                        next_attempt_at = CASE
                            WHEN event_deliveries.delivered_at IS NULL AND excluded.delivered_at IS NULL
                            THEN excluded.next_attempt_at
                            ELSE NULL
                        END
                    """,
                    [
                        attempt.eventID, endpoint, attemptedAt, attempt.delivered ? attemptedAt : nil,
                        attempt.delivered ? nil : attempt.retryAt.map(LedgerTime.milliseconds),
                    ])
                try db.run("DELETE FROM event_leases WHERE endpoint = ? AND event_id = ?", [endpoint, attempt.eventID])
            }
            // The mark moves up to the first event never attempted (or past the last event): events
            // are written by one writer at a time, so none appears below an event seen.
            try db.run(
                """
                INSERT INTO event_cursors (endpoint, attempted_below)
                VALUES (:endpoint, COALESCE(
                    (SELECT e.id FROM events e
                     WHERE \(Self.neverAttempted)
                     ORDER BY e.id LIMIT 1),
                    (SELECT COALESCE(MAX(id), 0) + 1 FROM events)))
                ON CONFLICT (endpoint) DO UPDATE SET
                    attempted_below = MAX(event_cursors.attempted_below, excluded.attempted_below)
                """, ["endpoint": endpoint])
        }
    }

    /// A lease of `endpoint` on the event `event` that has not ended at `:now`, for `NOT EXISTS`.
    private static func liveLease(_ event: String) -> String {
        "SELECT 1 FROM event_leases l WHERE l.event_id = \(event) AND l.endpoint = :endpoint AND l.leased_until > :now"
    }
}
