public import Foundation

/// The webhooks outbox: events written with the changes they describe, claimed under a lease,
/// delivered to each endpoint and tracked per endpoint.
///
/// One role of ``LedgerStore``.
public protocol OutboxLedger: Sendable {
    /// Events not yet delivered to `endpoint`, for the backlog metric.
    func undeliveredEventCount(endpoint: String) async throws -> Int

    /// Records the delivery attempts of a batch to `endpoint` in one write transaction, and
    /// releases their leases. A failed attempt is tried again at its `retryAt`, or given up
    /// without one; once delivered, an event stays delivered.
    func markDeliveries(_ attempts: [DeliveryAttempt], endpoint: String) async throws

    /// Takes the due events for `endpoint` that no one else holds, leased to `holder` until
    /// `leaseUntil`: until then no other holder (in this process or another replica) gets them, so
    /// each is sent once in the normal case. A holder that dies before
    /// ``markDeliveries(_:endpoint:)`` leaves the lease to expire, and the event is due again for
    /// everyone. The same holder gets back the events it holds: a claim that committed but whose
    /// answer never arrived is not left waiting for its lease to end. A holder's claims must
    /// therefore not overlap (one sender, one run at a time).
    func claimDueEvents(
        endpoint: String, holder: String, now: Date, limit: Int, leaseUntil: Date
    ) async throws -> [LedgerEvent]

    /// The newest outbox events with their delivery state per endpoint, newest first; of one
    /// customer when `appUserID` is given. An event names an anonymous customer as
    /// ``CustomerIDRedaction/redacted(_:)`` does, so its ``WebhookDelivery/appUserID`` is that; an
    /// anonymous `appUserID` given here is redacted the same way to find its events.
    func webhookDeliveries(bundleID: String?, appUserID: String?, limit: Int) async throws -> [WebhookDelivery]

    /// Writes a `subscription.duplicated` event for the customer: they subscribed in two stores to
    /// what one entitlement gives. Durable when it returns.
    func recordDuplicateSubscription(_ duplicate: DuplicateSubscription, at date: Date) async throws
}
