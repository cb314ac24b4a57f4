public import Foundation
import KakinWire
import SQLKit


extension SQLLedgerStore {
    /// Appends an outbox event inside the caller's transaction.
    static func appendEvent(
        _ type: String, bundleID: String, appUserID: String?, payload: some EventPayload, at createdAt: Int64,
        on db: any SQLDatabase
    ) async throws {
        let values: [LedgerValue] = [
            .text(type), .text(bundleID), .text(appUserID), .text(eventJSON(payload)), .integer(createdAt),
        ]
        // In a group of the writer, the event is inserted with the group's others before its commit.
        if let deferred = GroupCommitWriter.deferredRows { return deferred.add(.events, values) }
        _ = try await db.run(.appendEvent, values: values)
    }

    /// An event's body as the outbox stores it.
    static func eventJSON(_ payload: some EventPayload) -> String { payload.json }

    /// Events with no delivery to `endpoint` yet, or whose last attempt failed and whose retry
    /// time has come, oldest first. An event given up on (failed, no retry time) never comes back.
    public func dueEvents(endpoint: String, now: Date, limit: Int) async throws -> [LedgerEvent] {
        guard limit > 0 else { return [] }
        let rows = try await database.raw(
            """
            SELECT e.id, e.type, e.bundle_id, e.app_user_id, e.payload, e.created_at
            FROM events e
            LEFT JOIN event_deliveries d ON d.event_id = e.id AND d.endpoint = \(bind: endpoint)
            WHERE d.event_id IS NULL
               OR (d.delivered_at IS NULL AND d.next_attempt_at <= \(bind: LedgerTime.milliseconds(now)))
            ORDER BY e.id
            LIMIT \(bind: limit)
            """
        ).all()
        return try rows.map(LedgerRows.event)
    }

    /// Events not yet delivered to `endpoint` (due or waiting for a retry; given-up ones excluded).
    public func undeliveredEventCount(endpoint: String) async throws -> Int {
        try await database.raw(
            """
            SELECT COUNT(*) AS n FROM events e
            LEFT JOIN event_deliveries d ON d.event_id = e.id AND d.endpoint = \(bind: endpoint)
            WHERE d.event_id IS NULL OR (d.delivered_at IS NULL AND d.next_attempt_at IS NOT NULL)
            """
        ).first()?.decode(column: "n", as: Int.self) ?? 0
    }

    /// Takes the due events for `endpoint` that no one holds, leased until `leaseUntil`, oldest
    /// first, in one write transaction: the due rows are selected (on PostgreSQL locked, skipping
    /// rows other servers are leasing at that moment), then a lease is written for each unless a
    /// live one exists; only the events whose lease this call wrote are returned. The upsert's
    /// condition is checked against the latest committed lease, so two servers never both hold
    /// one, whatever they read before.
    public func claimDueEvents(endpoint: String, now: Date, limit: Int, leaseUntil: Date) async throws -> [LedgerEvent]
    {
        guard limit > 0 else { return [] }
        let nowMilliseconds = LedgerTime.milliseconds(now)
        let until = LedgerTime.milliseconds(leaseUntil)
        guard until > nowMilliseconds else {
            throw LedgerStoreError(.invalidArgument, "a lease must end after now")
        }
        let locking = dialect.lockSkippingLocked
        return try await writing { db in
            let candidates = try await db.raw(
                """
                SELECT e.id FROM events e
                LEFT JOIN event_deliveries d ON d.event_id = e.id AND d.endpoint = \(bind: endpoint)
                LEFT JOIN event_leases l ON l.event_id = e.id AND l.endpoint = \(bind: endpoint)
                WHERE (d.event_id IS NULL OR (d.delivered_at IS NULL AND d.next_attempt_at <= \(bind: nowMilliseconds)))
                  AND (l.event_id IS NULL OR l.leased_until <= \(bind: nowMilliseconds))
                ORDER BY e.id
                LIMIT \(bind: limit)
                \(unsafeRaw: locking)
                """
            ).all().map { try $0.decode(column: "id", as: Int64.self) }
            guard !candidates.isEmpty else { return [] }
            let leased = try await db.raw(
                """
                INSERT INTO event_leases (event_id, endpoint, leased_until)
                SELECT id, \(bind: endpoint), \(bind: until) FROM events WHERE id IN (\(binds: candidates))
                ON CONFLICT (event_id, endpoint) DO UPDATE SET leased_until = excluded.leased_until
                WHERE event_leases.leased_until <= \(bind: nowMilliseconds)
                RETURNING event_id
                """
            ).all().map { try $0.decode(column: "event_id", as: Int64.self) }
            guard !leased.isEmpty else { return [] }
            let rows = try await db.raw(
                """
                SELECT id, type, bundle_id, app_user_id, payload, created_at FROM events
                WHERE id IN (\(binds: leased))
                ORDER BY id
                """
            ).all()
            return try rows.map(LedgerRows.event)
        }
    }

    /// Records one delivery attempt of an event to an endpoint, and releases the event's lease
    /// for that endpoint (``markDeliveries(_:endpoint:)`` with one attempt).
    public func markDelivery(
        eventID: Int64, endpoint: String, delivered: Bool, at date: Date, retryAt: Date?
    ) async throws {
        try await markDeliveries(
            [DeliveryAttempt(eventID: eventID, delivered: delivered, at: date, retryAt: retryAt)], endpoint: endpoint)
    }

    /// Records the delivery attempts of a batch to `endpoint` in one write transaction: one
    /// multi-row upsert, and one delete of the batch's leases.
    ///
    /// Attempts are counted; once delivered, an event stays delivered (a late failure report
    /// changes nothing but the count). A failure schedules the next attempt at its `retryAt`, or
    /// gives up when that is `nil`. An unknown event ID is refused by the foreign key.
    public func markDeliveries(_ attempts: [DeliveryAttempt], endpoint: String) async throws {
        guard !attempts.isEmpty else { return }
        try await writing { database in
            for chunk in stride(from: 0, to: attempts.count, by: 100).map({ attempts[$0..<min($0 + 100, attempts.count)] }) {
                let rows = SQLList(
                    chunk.map { attempt -> any SQLExpression in
                        let attemptedAt = LedgerTime.milliseconds(attempt.date)
                        let deliveredAt: Int64? = attempt.delivered ? attemptedAt : nil
                        let nextAttemptAt: Int64? = attempt.delivered ? nil : attempt.retryAt.map(LedgerTime.milliseconds)
                        return SQLGroupExpression(
                            SQLList([
                                SQLBind(attempt.eventID), SQLBind(endpoint), SQLLiteral.numeric("1"), SQLBind(attemptedAt),
                                SQLBind(deliveredAt), SQLBind(nextAttemptAt),
                            ]))
                    })
                try await database.raw(
                    """
                    INSERT INTO event_deliveries (event_id, endpoint, attempts, last_attempt_at, delivered_at, next_attempt_at)
                    VALUES \(rows)
                    ON CONFLICT (event_id, endpoint) DO UPDATE SET
                        attempts = event_deliveries.attempts + 1,
                        last_attempt_at = excluded.last_attempt_at,
                        delivered_at = COALESCE(event_deliveries.delivered_at, excluded.delivered_at),
                        next_attempt_at = CASE
                            WHEN event_deliveries.delivered_at IS NULL AND excluded.delivered_at IS NULL
                            THEN excluded.next_attempt_at
                            ELSE NULL
                        END
                    """
                ).run()
                try await database.raw(
                    """
                    DELETE FROM event_leases
                    WHERE endpoint = \(bind: endpoint) AND event_id IN (\(binds: chunk.map(\.eventID)))
                    """
                ).run()
            }
        }
    }
}


extension DeferredTable {
    /// The outbox's events.
    static let events = DeferredTable("events", columns: ["type", "bundle_id", "app_user_id", "payload", "created_at"])
}
