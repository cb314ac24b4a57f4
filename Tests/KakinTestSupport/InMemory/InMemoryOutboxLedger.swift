import Foundation
import KakinLedger

/// A webhooks outbox kept in memory: ``OutboxLedger`` for tests of what uses the role, run
/// without a database. Events are written with ``append(type:bundleID:appUserID:payload:at:)``
/// (an engine writes them with the changes they describe). Instants are kept in whole
/// milliseconds, as the engines store them.
public actor InMemoryOutboxLedger: OutboxLedger {
    private struct Delivery {
        var attempts: Int
        var lastAttemptAt: Date
        var deliveredAt: Date?
        var nextAttemptAt: Date?
    }

    private struct Key: Hashable {
        var eventID: Int64
        var endpoint: String
    }

    private var events: [LedgerEvent] = []
    private var deliveries: [Key: Delivery] = [:]
    private var leases: [Key: (until: Date, holder: String)] = [:]

    /// An empty outbox.
    public init() {}

    /// Writes an event, as a change does; the customer is named as events name them
    /// (``CustomerIDRedaction/redacted(_:)``). Returns it.
    @discardableResult
    public func append(
        type: String, bundleID: String, appUserID: String?, payload: Data = Data("{}".utf8), at date: Date
    ) -> LedgerEvent {
        let event = LedgerEvent(
            id: Int64(events.count + 1), type: type, bundleID: bundleID,
            appUserID: appUserID.map(CustomerIDRedaction.redacted), payload: payload, createdAt: stored(date))
        events.append(event)
        return event
    }

    public func recordDuplicateSubscription(_ duplicate: DuplicateSubscription, at date: Date) async throws {
        append(
            type: "subscription.duplicated", bundleID: duplicate.bundleID, appUserID: duplicate.appUserID,
            payload: Data(duplicate.json.utf8), at: date)
    }

    public func undeliveredEventCount(endpoint: String) async throws -> Int {
        events.filter { event in
            guard let delivery = deliveries[Key(eventID: event.id, endpoint: endpoint)] else { return true }
            return delivery.deliveredAt == nil && delivery.nextAttemptAt != nil
        }.count
    }

    public func markDeliveries(_ attempts: [DeliveryAttempt], endpoint: String) async throws {
        guard attempts.allSatisfy({ attempt in events.contains { $0.id == attempt.eventID } }) else {
            throw LedgerStoreError(.invalidArgument, "a delivery names an event the outbox does not hold")
        }
        for attempt in attempts {
            let key = Key(eventID: attempt.eventID, endpoint: endpoint)
            let date = stored(attempt.date)
            var delivery = deliveries[key] ?? Delivery(attempts: 0, lastAttemptAt: date)
            delivery.attempts += 1
            delivery.lastAttemptAt = date
            delivery.deliveredAt = delivery.deliveredAt ?? (attempt.delivered ? date : nil)
            delivery.nextAttemptAt = delivery.deliveredAt == nil ? attempt.retryAt.map(stored) : nil
            deliveries[key] = delivery
            leases[key] = nil
        }
    }

    public func claimDueEvents(
        endpoint: String, holder: String, now: Date, limit: Int, leaseUntil: Date
    ) async throws -> [LedgerEvent] {
        guard limit > 0 else { return [] }
        let now = stored(now)
        guard stored(leaseUntil) > now else { throw LedgerStoreError(.invalidArgument, "a lease must end after now") }
        let due = events.filter { event in
            let key = Key(eventID: event.id, endpoint: endpoint)
            if let lease = leases[key], lease.until > now, lease.holder != holder { return false }
            guard let delivery = deliveries[key] else { return true }
            return delivery.deliveredAt == nil && delivery.nextAttemptAt.map { $0 <= now } == true
        }.prefix(limit)
        for event in due { leases[Key(eventID: event.id, endpoint: endpoint)] = (stored(leaseUntil), holder) }
        return Array(due)
    }

    public func webhookDeliveries(bundleID: String?, appUserID: String?, limit: Int) async throws -> [WebhookDelivery] {
        let customer = appUserID.map(CustomerIDRedaction.redacted)
        var rows: [WebhookDelivery] = []
        for event in events.reversed()
        where (bundleID == nil || event.bundleID == bundleID) && (customer == nil || event.appUserID == customer) {
            let attempted = deliveries.filter { $0.key.eventID == event.id }.sorted { $0.key.endpoint < $1.key.endpoint }
            guard !attempted.isEmpty else {
                rows.append(
                    WebhookDelivery(
                        eventID: event.id, type: event.type, bundleID: event.bundleID, appUserID: event.appUserID,
                        createdAt: event.createdAt, endpoint: nil, attempts: 0, lastAttemptAt: nil, deliveredAt: nil,
                        nextAttemptAt: nil))
                continue
            }
            for (key, delivery) in attempted {
                rows.append(
                    WebhookDelivery(
                        eventID: event.id, type: event.type, bundleID: event.bundleID, appUserID: event.appUserID,
                        createdAt: event.createdAt, endpoint: key.endpoint, attempts: delivery.attempts,
                        lastAttemptAt: delivery.lastAttemptAt, deliveredAt: delivery.deliveredAt,
                        nextAttemptAt: delivery.nextAttemptAt))
            }
        }
        return Array(rows.prefix(limit))
    }
}
