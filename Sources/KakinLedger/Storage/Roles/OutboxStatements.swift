import Foundation

/// The outbox's deliveries, written once for both engines. Where each engine's claims and mark
/// differ (SQLite orders events by ID, written one writer at a time; PostgreSQL by the
/// transaction that wrote them, so that none commits below a mark), each keeps its own.
enum OutboxStatements {
    /// Records the delivery attempts of a batch to `endpoint`, and releases their leases.
    /// Attempts are counted; once delivered, an event stays delivered; a failure is tried again
    /// at its `retryAt`, or given up without one. An unknown event is refused by the foreign key.
    static func record(_ attempts: [DeliveryAttempt], endpoint: String) -> [LedgerSQL] {
        attempts.map { attempt in
            let attempted = LedgerTime.milliseconds(attempt.date)
            let next = attempt.delivered ? nil : attempt.retryAt.map(LedgerTime.milliseconds)
            return """
                INSERT INTO event_deliveries
                    (event_id, endpoint, attempts, last_attempt_at, delivered_at, next_attempt_at)
                VALUES (\(attempt.eventID), \(endpoint), 1, \(attempted), \(attempt.delivered ? attempted : nil), \(next))
                ON CONFLICT (event_id, endpoint) DO UPDATE SET
                    attempts = event_deliveries.attempts + 1,
                    last_attempt_at = excluded.last_attempt_at,
                    delivered_at = COALESCE(event_deliveries.delivered_at, excluded.delivered_at),
                    next_attempt_at = CASE
                        WHEN event_deliveries.delivered_at IS NULL AND excluded.delivered_at IS NULL
                        THEN excluded.next_attempt_at
                    END
                """
        } + ["DELETE FROM event_leases WHERE endpoint = \(endpoint) AND event_id IN (\(list: attempts.map(\.eventID)))"]
    }
}
