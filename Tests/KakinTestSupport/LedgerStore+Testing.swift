import Foundation
import KakinLedger

extension OutboxLedger {
    /// Takes the due events for `endpoint` under a lease no later claim takes back before
    /// `leaseUntil`: ``OutboxLedger/claimDueEvents(endpoint:holder:now:limit:leaseUntil:)`` with a
    /// holder of its own, as a server that never comes back for a claim.
    public func claimDueEvents(
        endpoint: String, now: Date, limit: Int, leaseUntil: Date
    ) async throws -> [LedgerEvent] {
        try await claimDueEvents(
            endpoint: endpoint, holder: UUID().uuidString, now: now, limit: limit, leaseUntil: leaseUntil)
    }

    /// The events due for `endpoint` at `now`, taken as a sender takes them but leased for one
    /// millisecond only: a look a millisecond later sees them again unless a delivery was recorded.
    public func dueEvents(endpoint: String, now: Date, limit: Int) async throws -> [LedgerEvent] {
        guard limit > 0 else { return [] }
        return try await claimDueEvents(
            endpoint: endpoint, now: now, limit: limit, leaseUntil: now.addingTimeInterval(0.001))
    }

    /// Records one delivery attempt (``OutboxLedger/markDeliveries(_:endpoint:)`` with one).
    public func markDelivery(eventID: Int64, endpoint: String, delivered: Bool, at date: Date, retryAt: Date?) async throws {
        try await markDeliveries(
            [DeliveryAttempt(eventID: eventID, delivered: delivered, at: date, retryAt: retryAt)], endpoint: endpoint)
    }
}

extension AppleCallLedger {
    /// Takes the pending calls due at `now` under a lease no later claim takes back before
    /// `leaseUntil`: ``AppleCallLedger/claimDueAppleRequests(holder:now:limit:leaseUntil:)`` with a
    /// holder of its own.
    public func claimDueAppleRequests(now: Date, limit: Int, leaseUntil: Date) async throws -> [AppleRequestRecord] {
        try await claimDueAppleRequests(holder: UUID().uuidString, now: now, limit: limit, leaseUntil: leaseUntil)
    }
}
