import Foundation

/// A row of `stripe_events`: one of Stripe's events received for an app.
struct StripeEventRow: LedgerRecord {
    static let table = "stripe_events"
    typealias Columns = CodingKeys

    var bundleID: String
    var eventID: String
    var type: String
    var objectID: String?
    /// 1 for live mode, 0 for test mode.
    var livemode: Int
    var createdAt: Int64
    var receivedAt: Int64
    var payload: String
    var appliedAt: Int64?
    var attempts: Int
    var failure: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case bundleID = "bundle_id"
        case eventID = "event_id"
        case type
        case objectID = "object_id"
        case livemode
        case createdAt = "created_at"
        case receivedAt = "received_at"
        case payload
        case appliedAt = "applied_at"
        case attempts
        case failure
    }

    init(_ event: StripeEventRecord) {
        bundleID = event.bundleID
        eventID = event.eventID
        type = event.type
        objectID = event.objectID
        livemode = event.livemode ? 1 : 0
        createdAt = LedgerTime.milliseconds(event.createdAt)
        receivedAt = LedgerTime.milliseconds(event.receivedAt)
        payload = event.payload
        appliedAt = event.appliedAt.map(LedgerTime.milliseconds)
        attempts = event.attempts
        failure = event.failure
    }

    var event: StripeEventRecord {
        StripeEventRecord(
            bundleID: bundleID, eventID: eventID, type: type, objectID: objectID, livemode: livemode != 0,
            createdAt: LedgerTime.date(createdAt), receivedAt: LedgerTime.date(receivedAt), payload: payload,
            appliedAt: appliedAt.map(LedgerTime.date), attempts: attempts, failure: failure)
    }
}

/// The statements of Stripe's events that tests read the plans of, the same on both engines.
enum StripeEventStatements {
    /// The app's events still to apply, in the order they are applied, at most `limit`: a walk of
    /// the partial index `stripe_events_to_apply`, which holds them in that order.
    static func toApply(bundleID: String, after: StripeEventRecord?, limit: Int) -> LedgerSQL {
        guard let after else {
            return """
                SELECT \(unescaped: StripeEventRow.selection()) FROM stripe_events
                WHERE bundle_id = \(bundleID) AND applied_at IS NULL
                ORDER BY created_at, event_id LIMIT \(limit)
                """
        }
        let created = LedgerTime.milliseconds(after.createdAt)
        return """
            SELECT \(unescaped: StripeEventRow.selection()) FROM stripe_events
            WHERE bundle_id = \(bundleID) AND applied_at IS NULL
              AND (created_at > \(created) OR (created_at = \(created) AND event_id > \(after.eventID)))
            ORDER BY created_at, event_id LIMIT \(limit)
            """
    }

    /// When the app's newest event was made (`value`, `NULL` when it has none): one probe of the
    /// index by app and time.
    static func newest(bundleID: String) -> LedgerSQL {
        "SELECT MAX(created_at) AS value FROM stripe_events WHERE bundle_id = \(bundleID)"
    }

    /// Whether the ledger holds the event (a row, or none): read after a mark that changed
    /// nothing, to tell an event applied before from one never recorded.
    static func known(bundleID: String, eventID: String) -> LedgerSQL {
        "SELECT event_id AS value FROM stripe_events WHERE bundle_id = \(bundleID) AND event_id = \(eventID)"
    }
}

/// Stripe's events: recorded with one insert when received, read in the order they are applied,
/// marked applied or failed with one update each. None of them runs when a purchase is recorded.
extension StatementEngine {
    public func recordStripeEvent(_ event: StripeEventRecord) async throws -> Bool {
        try LedgerRules.validateStripeEvent(event)
        return try await write(
            """
            INSERT INTO \(insert: StripeEventRow(event))
            ON CONFLICT (bundle_id, event_id) DO NOTHING RETURNING event_id
            """) > 0
    }

    public func stripeEventsToApply(
        bundleID: String, after: StripeEventRecord?, limit: Int
    ) async throws -> [StripeEventRecord] {
        try LedgerRules.validateStripeText(bundleID, "a bundle ID")
        try LedgerRules.validateStripeLimit(limit)
        return try await read(
            StripeEventStatements.toApply(bundleID: bundleID, after: after, limit: limit), as: StripeEventRow.self
        ).map(\.event)
    }

    public func stripeEvent(bundleID: String, eventID: String) async throws -> StripeEventRecord? {
        try LedgerRules.validateStripeEvent(bundleID: bundleID, eventID: eventID)
        return try await read(
            """
            SELECT \(unescaped: StripeEventRow.selection()) FROM stripe_events
            WHERE bundle_id = \(bundleID) AND event_id = \(eventID)
            """, as: StripeEventRow.self
        ).first?.event
    }

    public func markStripeEventApplied(bundleID: String, eventID: String, at: Date) async throws {
        try LedgerRules.validateStripeEvent(bundleID: bundleID, eventID: eventID)
        try await mark(
            bundleID: bundleID, eventID: eventID,
            """
            UPDATE stripe_events SET applied_at = \(at), failure = NULL
            WHERE bundle_id = \(bundleID) AND event_id = \(eventID) AND applied_at IS NULL
            RETURNING event_id
            """)
    }

    public func markStripeEventFailed(bundleID: String, eventID: String, failure: String) async throws {
        try LedgerRules.validateStripeEvent(bundleID: bundleID, eventID: eventID)
        try LedgerRules.validateStripeFailure(failure)
        try await mark(
            bundleID: bundleID, eventID: eventID,
            """
            UPDATE stripe_events SET attempts = attempts + 1, failure = \(failure)
            WHERE bundle_id = \(bundleID) AND event_id = \(eventID) AND applied_at IS NULL
            RETURNING event_id
            """)
    }

    public func newestStripeEvent(bundleID: String) async throws -> Date? {
        try LedgerRules.validateStripeText(bundleID, "a bundle ID")
        return try await value(StripeEventStatements.newest(bundleID: bundleID), as: Int64?.self).flatMap { $0 }
            .map(LedgerTime.date)
    }

    /// Runs `update`, which changes the event only while it is still to apply, in one write with
    /// a read of whether the event is recorded at all: an event applied before is left as it is,
    /// one never recorded is an error.
    private func mark(bundleID: String, eventID: String, _ update: LedgerSQL) async throws {
        try await perform(
            for: nil,
            .run([update, StripeEventStatements.known(bundleID: bundleID, eventID: eventID)]) { rows in
                guard !rows[0].isEmpty || !rows[1].isEmpty else {
                    throw LedgerRules.unknownStripeEvent(bundleID: bundleID, eventID: eventID)
                }
                return .done(())
            })
    }
}
