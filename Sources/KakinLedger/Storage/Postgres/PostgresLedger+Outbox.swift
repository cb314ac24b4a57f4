import AppStoreModels
public import Foundation
import PostgresNIO

/// The webhooks outbox on PostgreSQL: events are ordered by the transaction that wrote them
/// (`xid`), so that the endpoint's mark never passes an event a running transaction will commit.
extension PostgresLedger {
    // MARK: Webhooks outbox

    /// Counts the failed attempts waiting for their retry (from the index of due retries) and the
    /// events at or above the endpoint's mark that were never attempted. The mark is read first and
    /// written into the count as a number: planned for any mark, the count would read every event.
    public func undeliveredEventCount(endpoint: String) async throws -> Int {
        let mark =
            try await rows("SELECT attempted_below::TEXT FROM event_cursors WHERE endpoint = \(endpoint)")
            .first?.decode(String.self)
        guard let below = UInt64(mark ?? "0") else {
            throw LedgerStoreError(.inconsistentState, "the webhook mark of \(endpoint) is not a transaction ID")
        }
        return try await rows(
            """
            SELECT (SELECT COUNT(*) FROM event_deliveries
                    WHERE endpoint = \(endpoint) AND next_attempt_at IS NOT NULL AND delivered_at IS NULL)
                 + (SELECT COUNT(*) FROM events e
                    WHERE e.xid >= '\(unescaped: String(below))'::xid8
                      AND NOT EXISTS (
                          SELECT 1 FROM event_deliveries d WHERE d.event_id = e.id AND d.endpoint = \(endpoint)))
            """
        ).first?.decode(Int.self) ?? 0
    }

    /// Takes the due events for `endpoint`, oldest first, in one statement: failed attempts whose
    /// retry is due (from their index) and events at or above the endpoint's mark never attempted,
    /// neither under a live lease, each read only as far as the limit and locked unless another
    /// claim holds them (`FOR UPDATE … SKIP LOCKED`); a lease is written for the oldest of them
    /// unless a live one exists (checked on the latest committed lease). Only the events leased by
    /// this call are returned.
    public func claimDueEvents(endpoint: String, now: Date, limit: Int, leaseUntil: Date) async throws -> [LedgerEvent]
    {
        guard limit > 0 else { return [] }
        let (current, until) = (ms(now), ms(leaseUntil))
        guard until > current else { throw LedgerStoreError(.invalidArgument, "a lease must end after now") }
        return try await written(
            """
            WITH retries AS (
                SELECT e.id FROM event_deliveries d JOIN events e ON e.id = d.event_id
                WHERE d.endpoint = \(endpoint) AND d.next_attempt_at <= \(current) AND d.delivered_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM event_leases l
                                  WHERE l.event_id = d.event_id AND l.endpoint = \(endpoint) AND l.leased_until > \(current))
                ORDER BY d.next_attempt_at LIMIT \(Int64(limit)) FOR UPDATE OF e SKIP LOCKED),
            fresh AS (
                SELECT e.id FROM events e
                WHERE e.xid >= COALESCE(
                        (SELECT attempted_below FROM event_cursors WHERE endpoint = \(endpoint)), '0')
                  AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = e.id AND d.endpoint = \(endpoint))
                  AND NOT EXISTS (SELECT 1 FROM event_leases l
                                  WHERE l.event_id = e.id AND l.endpoint = \(endpoint) AND l.leased_until > \(current))
                ORDER BY e.xid, e.id LIMIT \(Int64(limit)) FOR UPDATE OF e SKIP LOCKED),
            due AS (
                SELECT id FROM (SELECT id FROM retries UNION ALL SELECT id FROM fresh) candidates
                ORDER BY id LIMIT \(Int64(limit))),
            leased AS (
                INSERT INTO event_leases (event_id, endpoint, leased_until) SELECT id, \(endpoint), \(until) FROM due
                ON CONFLICT (event_id, endpoint) DO UPDATE SET leased_until = excluded.leased_until
                WHERE event_leases.leased_until <= \(current)
                RETURNING event_id)
            SELECT e.id, e.type, e.bundle_id, e.app_user_id, e.payload, e.created_at
            FROM events e JOIN leased ON leased.event_id = e.id ORDER BY e.id
            """
        ).map { row in
            let (id, type, bundle, user, payload, created) = try row.decode(
                (Int64, String, String, String?, String, Int64).self)
            return LedgerEvent(
                id: id, type: type, bundleID: bundle, appUserID: user, payload: Data(payload.utf8),
                createdAt: date(created))
        }
    }

    /// Records the delivery attempts of a batch (``OutboxStatements/record(_:endpoint:)``) in one
    /// write transaction, and moves the endpoint's mark.
    public func markDeliveries(_ attempts: [DeliveryAttempt], endpoint: String) async throws {
        guard !attempts.isEmpty else { return }
        try await write { connection in
            for statement in OutboxStatements.record(attempts, endpoint: endpoint) {
                _ = try await connection.rows(statement.postgresQuery)
            }
            // The mark moves up to the transaction of the first event never attempted, and never past
            // a transaction still running (`pg_snapshot_xmin`): the events of older transactions are
            // all visible now, and no event will ever be written by one of them again.
            _ = try await connection.rows(
                """
                WITH mark AS (
                    SELECT COALESCE((SELECT attempted_below FROM event_cursors WHERE endpoint = \(endpoint)), '0') AS below),
                horizon AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xid)
                INSERT INTO event_cursors (endpoint, attempted_below)
                SELECT \(endpoint), LEAST(horizon.xid, COALESCE((
                    SELECT e.xid FROM events e
                    WHERE e.xid >= mark.below
                      AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = e.id AND d.endpoint = \(endpoint))
                    ORDER BY e.xid, e.id LIMIT 1), horizon.xid))
                FROM mark, horizon
                ON CONFLICT (endpoint) DO UPDATE SET
                    attempted_below = GREATEST(event_cursors.attempted_below, excluded.attempted_below)
                """)
        }
    }
}

/// Instants as the ledger stores them (``LedgerTime``), short for the statements.
func ms(_ date: Date) -> Int64 { LedgerTime.milliseconds(date) }
func date(_ milliseconds: Int64) -> Date { LedgerTime.date(milliseconds) }
