public import Foundation

/// Stripe's events, kept as a transactional inbox: each recorded once per app and event ID as it
/// arrives (a webhook, or the reconciliation's `GET /v1/events`), then applied in order, oldest
/// first, each marked applied or failed.
///
/// Every method throws ``LedgerStoreError/Code/invalidArgument`` for an empty ID, bundle ID or
/// event type, an ID or type over 255 characters, a failure over 2,000 characters, or a limit
/// below one, before anything is read or written.
///
/// One role of ``LedgerStore``.
public protocol StripeEventLedger: Sendable {
    /// Records an event, once per app and event ID, as given (a new event is still to apply, with
    /// no attempt failed): `false`, and nothing changed, when that event was recorded before for
    /// the app (Stripe sends events again). One insert.
    ///
    /// - Throws: ``LedgerStoreError/Code/invalidArgument`` also for an empty payload, attempts
    ///   below zero, a failure on an applied event or a failure without a failed attempt.
    func recordStripeEvent(_ event: StripeEventRecord) async throws -> Bool

    /// The app's events not applied yet, in the order they are applied: oldest first by when
    /// Stripe made them, then by event ID (compared byte by byte), at most `limit`, after the
    /// event `after` in that order when given (the next page, past events that failed). An event
    /// that failed stays among them, with its attempts and failure.
    func stripeEventsToApply(
        bundleID: String, after: StripeEventRecord?, limit: Int
    ) async throws -> [StripeEventRecord]

    /// The event as the ledger holds it, applied or not; `nil` when none is recorded for the app
    /// with that ID.
    func stripeEvent(bundleID: String, eventID: String) async throws -> StripeEventRecord?

    /// Marks an event applied at `at`, clearing its failure. An event applied before keeps its
    /// first time (nothing changes).
    ///
    /// - Throws: ``LedgerStoreError/Code/invalidArgument`` with the cause `unknownStripeEvent`
    ///   when the ledger holds no such event for the app.
    func markStripeEventApplied(bundleID: String, eventID: String, at: Date) async throws

    /// Counts a failed attempt to apply an event and keeps why (`failure`, replacing the previous
    /// one); the event stays to apply. An event applied before is left as it is.
    ///
    /// - Throws: ``LedgerStoreError/Code/invalidArgument`` with the cause `unknownStripeEvent`
    ///   when the ledger holds no such event for the app.
    func markStripeEventFailed(bundleID: String, eventID: String, failure: String) async throws

    /// When Stripe made the newest event recorded for the app, applied or not; `nil` when none is.
    /// The reconciliation's checkpoint: it lists Stripe's events made from that second on (those of
    /// the second itself again, as recording an event again changes nothing).
    func newestStripeEvent(bundleID: String) async throws -> Date?
}

extension StripeEventLedger {
    /// The first `limit` of the app's events not applied yet
    /// (``stripeEventsToApply(bundleID:after:limit:)`` from the first).
    public func stripeEventsToApply(bundleID: String, limit: Int) async throws -> [StripeEventRecord] {
        try await stripeEventsToApply(bundleID: bundleID, after: nil, limit: limit)
    }
}
