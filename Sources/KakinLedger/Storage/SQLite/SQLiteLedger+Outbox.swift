import Foundation
import GRDB

/// The webhooks outbox.
extension SQLiteLedger {
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

    /// Records the delivery attempts of a batch (``OutboxStatements/record(_:endpoint:)``) in one
    /// write, and moves the endpoint's mark.
    public func markDeliveries(_ attempts: [DeliveryAttempt], endpoint: String) async throws {
        guard !attempts.isEmpty else { return }
        try await write { db in
            for statement in OutboxStatements.record(attempts, endpoint: endpoint) { _ = try db.rows(statement) }
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
