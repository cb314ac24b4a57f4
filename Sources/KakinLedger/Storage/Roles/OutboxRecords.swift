import Foundation

/// A row of `event_deliveries`: the attempts to deliver an event (``EventRow``) to one webhook
/// endpoint. Once delivered it stays delivered; a failed attempt is tried again from
/// `next_attempt_at`, or given up when it has none.
struct EventDeliveryRow: LedgerRecord {
    static let table = "event_deliveries"
    typealias Columns = CodingKeys

    var eventID: Int64
    var endpoint: String
    /// How many times the event was sent to the endpoint, at least once.
    var attempts: Int
    var lastAttemptAt: Int64
    /// When an attempt delivered it; `NULL` until one does.
    var deliveredAt: Int64?
    /// When the next attempt is due; `NULL` once delivered or given up.
    var nextAttemptAt: Int64?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case eventID = "event_id"
        case endpoint, attempts
        case lastAttemptAt = "last_attempt_at"
        case deliveredAt = "delivered_at"
        case nextAttemptAt = "next_attempt_at"
    }
}

/// A row of `event_leases`: an event a server took to send to one endpoint, held until
/// `leased_until` so that servers sharing the database do not send it twice; a lease left by a
/// server that stopped ends, and the event is due again. `holder` names the sender that holds it,
/// which may take it back before it ends.
struct EventLeaseRow: LedgerRecord {
    static let table = "event_leases"
    typealias Columns = CodingKeys

    var eventID: Int64
    var endpoint: String
    var leasedUntil: Int64
    var holder: String

    enum CodingKeys: String, CodingKey, CaseIterable {
        case eventID = "event_id"
        case endpoint
        case leasedUntil = "leased_until"
        case holder
    }
}

/// A row of `event_cursors`: an endpoint's mark, below which every event was attempted at least
/// once, so that a claim reads only the events above it. On SQLite the mark is an event's id; on
/// PostgreSQL it is a transaction ID (`xid8`), since events become visible there in the order
/// their transactions commit.
struct EventCursorRow: LedgerRecord {
    static let table = "event_cursors"
    typealias Columns = CodingKeys

    var endpoint: String
    var attemptedBelow: Int64

    enum CodingKeys: String, CodingKey, CaseIterable {
        case endpoint
        case attemptedBelow = "attempted_below"
    }
}
