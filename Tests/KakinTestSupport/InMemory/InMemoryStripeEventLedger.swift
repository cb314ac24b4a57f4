import Foundation

@testable import KakinLedger

/// Stripe's events kept in memory: ``StripeEventLedger`` for tests of what uses the role, run
/// without a database. The arguments are checked by the ledger's own rules (``LedgerRules``), and
/// instants are kept in whole milliseconds, as the engines store them.
public actor InMemoryStripeEventLedger: StripeEventLedger {
    /// An event of one app.
    private struct Key: Hashable {
        var bundleID: String
        var eventID: String
    }

    private var events: [Key: StripeEventRecord] = [:]

    /// An empty ledger.
    public init() {}

    public func recordStripeEvent(_ event: StripeEventRecord) async throws -> Bool {
        try LedgerRules.validateStripeEvent(event)
        let key = Key(bundleID: event.bundleID, eventID: event.eventID)
        guard events[key] == nil else { return false }
        var event = event
        event.createdAt = stored(event.createdAt)
        event.receivedAt = stored(event.receivedAt)
        event.appliedAt = event.appliedAt.map(stored)
        events[key] = event
        return true
    }

    public func stripeEventsToApply(
        bundleID: String, after: StripeEventRecord?, limit: Int
    ) async throws -> [StripeEventRecord] {
        try LedgerRules.validateStripeText(bundleID, "a bundle ID")
        try LedgerRules.validateStripeLimit(limit)
        // Event IDs compare by their UTF-8 bytes, as the engines' bytewise collation does.
        func precedes(_ lhs: StripeEventRecord, _ rhs: StripeEventRecord) -> Bool {
            lhs.createdAt != rhs.createdAt
                ? lhs.createdAt < rhs.createdAt : lhs.eventID.utf8.lexicographicallyPrecedes(rhs.eventID.utf8)
        }
        return Array(
            events.values.filter { $0.bundleID == bundleID && $0.appliedAt == nil }
                .filter { event in after.map { precedes($0, event) } ?? true }
                .sorted(by: precedes)
                .prefix(limit))
    }

    public func stripeEvent(bundleID: String, eventID: String) async throws -> StripeEventRecord? {
        try LedgerRules.validateStripeEvent(bundleID: bundleID, eventID: eventID)
        return events[Key(bundleID: bundleID, eventID: eventID)]
    }

    public func markStripeEventApplied(bundleID: String, eventID: String, at: Date) async throws {
        try LedgerRules.validateStripeEvent(bundleID: bundleID, eventID: eventID)
        try update(bundleID: bundleID, eventID: eventID) { event in
            event.appliedAt = stored(at)
            event.failure = nil
        }
    }

    public func markStripeEventFailed(bundleID: String, eventID: String, failure: String) async throws {
        try LedgerRules.validateStripeEvent(bundleID: bundleID, eventID: eventID)
        try LedgerRules.validateStripeFailure(failure)
        try update(bundleID: bundleID, eventID: eventID) { event in
            event.attempts += 1
            event.failure = failure
        }
    }

    public func newestStripeEvent(bundleID: String) async throws -> Date? {
        try LedgerRules.validateStripeText(bundleID, "a bundle ID")
        return events.values.filter { $0.bundleID == bundleID }.map(\.createdAt).max()
    }

    /// Changes the event while it is still to apply; an event applied before is left as it is,
    /// one never recorded is an error.
    private func update(bundleID: String, eventID: String, _ change: (inout StripeEventRecord) -> Void) throws {
        let key = Key(bundleID: bundleID, eventID: eventID)
        guard var event = events[key] else {
            throw LedgerRules.unknownStripeEvent(bundleID: bundleID, eventID: eventID)
        }
        guard event.appliedAt == nil else { return }
        change(&event)
        events[key] = event
    }
}
