import Foundation

/// The webhooks outbox, written once for both engines.
///
/// Each endpoint keeps a mark (`event_cursors`): every event below it was attempted at least once,
/// so a claim reads the events in flight, not every event ever delivered. Events are placed by
/// their position (``LedgerSQLDialect/Word/eventPosition``): on SQLite their ID, as one writer at a
/// time writes them; on PostgreSQL the transaction that wrote them, since events become visible in
/// the order their transactions commit, and only those of transactions older than every running
/// one are final. The mark never passes an event that a running transaction may still commit.
extension StatementEngine {
    /// Counts the failed attempts waiting for their retry (from the index of due retries) and the
    /// events at or above the endpoint's mark that were never attempted. The mark is read first and
    /// written into the count as a constant: planned for any mark, the count would read every event.
    public func undeliveredEventCount(endpoint: String) async throws -> Int {
        try await snapshot(
            .run(["SELECT CAST(attempted_below AS TEXT) AS value FROM event_cursors WHERE endpoint = \(endpoint)"]) {
                rows in
                let mark = try rows[0].first(LedgerColumn<String>.self)?.value ?? "0"
                guard let below = UInt64(mark) else {
                    throw LedgerStoreError(.inconsistentState, "the webhook mark of \(endpoint) is not an event position")
                }
                return .run([
                    """
                    SELECT (SELECT COUNT(*) FROM event_deliveries
                            WHERE endpoint = \(endpoint) AND next_attempt_at IS NOT NULL AND delivered_at IS NULL)
                         + (SELECT COUNT(*) FROM events e
                            WHERE e.\(.eventPosition) >= \(.position(below))
                              AND \(OutboxStatements.neverAttempted("e.id", endpoint: endpoint))) AS value
                    """
                ]) { .done(Int(try $0[0].first(LedgerColumn<Int64>.self)?.value ?? 0)) }
            })
    }

    /// Takes the due events for `endpoint`, oldest first: failed attempts whose retry is due (from
    /// their index) and events at or above the endpoint's mark never attempted, neither under a
    /// live lease of another holder, each read only as far as the limit and, on PostgreSQL, locked
    /// unless another claim holds them; then a lease to `holder` is written for each unless another
    /// holder's live one exists (checked on the latest committed lease). Only the events whose lease
    /// this call wrote are returned.
    public func claimDueEvents(
        endpoint: String, holder: String, now: Date, limit: Int, leaseUntil: Date
    ) async throws -> [LedgerEvent] {
        guard limit > 0 else { return [] }
        let (current, until) = (LedgerTime.milliseconds(now), LedgerTime.milliseconds(leaseUntil))
        guard until > current else { throw LedgerStoreError(.invalidArgument, "a lease must end after now") }
        let live = { (event: String) -> LedgerSQL in
            """
            NOT EXISTS (SELECT 1 FROM event_leases l
                        WHERE l.event_id = \(unescaped: event) AND l.endpoint = \(endpoint)
                          AND l.leased_until > \(current) AND l.holder <> \(holder))
            """
        }
        let due: LedgerSQL = """
            WITH retries AS (
                SELECT d.event_id AS id FROM event_deliveries d
                WHERE d.endpoint = \(endpoint) AND d.next_attempt_at <= \(current) AND d.delivered_at IS NULL
                  AND \(live("d.event_id"))
                ORDER BY d.next_attempt_at LIMIT \(limit) \(.skipLocked)),
            fresh AS (
                SELECT e.id FROM events e
                WHERE \(OutboxStatements.atOrAboveMark(endpoint: endpoint))
                  AND \(OutboxStatements.neverAttempted("e.id", endpoint: endpoint)) AND \(live("e.id"))
                ORDER BY e.\(.eventPosition), e.id LIMIT \(limit) \(.skipLocked))
            SELECT id AS value FROM (SELECT id FROM retries UNION ALL SELECT id FROM fresh) candidates
            ORDER BY id LIMIT \(limit)
            """
        return try await perform(
            for: nil,
            .run([due]) { rows in
                let candidates = try rows[0].decode(LedgerColumn<Int64>.self).map(\.value)
                guard !candidates.isEmpty else { return .done([]) }
                return .run([
                    """
                    INSERT INTO event_leases (event_id, endpoint, leased_until, holder)
                    SELECT id, \(endpoint), \(until), \(holder) FROM events WHERE id IN (\(list: candidates))
                    ON CONFLICT (event_id, endpoint) DO UPDATE
                    SET leased_until = excluded.leased_until, holder = excluded.holder
                    WHERE event_leases.leased_until <= \(current) OR event_leases.holder = excluded.holder
                    RETURNING event_id AS value
                    """
                ]) { rows in
                    let leased = try rows[0].decode(LedgerColumn<Int64>.self).map(\.value)
                    guard !leased.isEmpty else { return .done([]) }
                    return .run([
                        """
                        SELECT \(unescaped: EventRow.selection()) FROM events WHERE id IN (\(list: leased)) ORDER BY id
                        """
                    ]) { .done(try $0[0].decode(EventRow.self).map { try $0.event() }) }
                }
            })
    }

    /// Records the delivery attempts of a batch (``OutboxStatements/record(_:endpoint:)``) in one
    /// write, and moves the endpoint's mark.
    public func recordDuplicateSubscription(_ duplicate: DuplicateSubscription, at date: Date) async throws {
        let statements = EventStatements.append(
            LedgerEventType.subscriptionDuplicated, bundleID: duplicate.bundleID, appUserID: duplicate.appUserID,
            payload: DuplicateSubscriptionPayload(duplicate), at: LedgerTime.milliseconds(date))
        try await perform(for: duplicate.appUserID, .run(statements) { _ in .done(()) })
    }

    public func markDeliveries(_ attempts: [DeliveryAttempt], endpoint: String) async throws {
        guard !attempts.isEmpty else { return }
        try await perform(
            for: nil,
            .run(OutboxStatements.record(attempts, endpoint: endpoint) + [OutboxStatements.moveMark(endpoint: endpoint)]) {
                _ in .done(())
            })
    }
}

/// The outbox's statements that more than one of its operations runs.
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

    /// The event `e` is at or above the endpoint's mark (the first position when it has none).
    static func atOrAboveMark(endpoint: String) -> LedgerSQL {
        """
        e.\(.eventPosition) >= COALESCE(
            (SELECT attempted_below FROM event_cursors WHERE endpoint = \(endpoint)), \(.position(0)))
        """
    }

    /// The event whose ID is `event` was never attempted to `endpoint`.
    static func neverAttempted(_ event: String, endpoint: String) -> LedgerSQL {
        "NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = \(unescaped: event) AND d.endpoint = \(endpoint))"
    }

    /// Moves the endpoint's mark up to the position of the first event at or above it never
    /// attempted, and never past the position below which every event is final
    /// (``LedgerSQLDialect/Word/finalPositions``): no event is ever written below that again.
    static func moveMark(endpoint: String) -> LedgerSQL {
        """
        INSERT INTO event_cursors (endpoint, attempted_below)
        SELECT \(endpoint), \(.least)(final.below, COALESCE((
            SELECT e.\(.eventPosition) FROM events e
            WHERE \(atOrAboveMark(endpoint: endpoint)) AND \(neverAttempted("e.id", endpoint: endpoint))
            ORDER BY e.\(.eventPosition), e.id LIMIT 1), final.below))
        FROM (SELECT \(.finalPositions) AS below) final WHERE TRUE
        ON CONFLICT (endpoint) DO UPDATE SET
            attempted_below = \(.greatest)(event_cursors.attempted_below, excluded.attempted_below)
        """
    }
}

extension EventRow {
    /// The event this row holds, as the outbox hands it out.
    func event() throws -> LedgerEvent {
        guard let id else { throw LedgerStoreError(.inconsistentState, "an event was read without its ID") }
        return LedgerEvent(
            id: id, type: type, bundleID: bundleID, appUserID: appUserID, payload: Data(payload.utf8),
            createdAt: LedgerTime.date(createdAt))
    }
}
