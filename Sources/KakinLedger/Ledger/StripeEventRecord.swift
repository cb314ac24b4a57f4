public import Foundation

/// One of Stripe's events as the ledger keeps it (`stripe_events`): recorded once per app and
/// event ID as it was received (a webhook's body, or an element of `GET /v1/events`), then applied
/// in order: the transactional inbox of an app's web purchases.
///
/// Stripe delivers an event again until it is acknowledged, and lists it again when the events are
/// reconciled, so recording one is idempotent (``StripeEventLedger/recordStripeEvent(_:)``); what
/// it means for purchases is worked out when it is applied, from the ``payload`` kept whole.
public struct StripeEventRecord: Hashable, Sendable {
    /// The app the event was received for.
    public var bundleID: String
    /// Stripe's ID of the event (`evt_…`): the same for every delivery of it.
    public var eventID: String
    /// What happened, as Stripe names it (`invoice.paid`, `charge.refunded`, …).
    public var type: String
    /// The ID of the object the event happened to (`in_…`, `ch_…`), when it has one.
    public var objectID: String?
    /// Whether the event is of Stripe's live mode (`false`: test mode).
    public var livemode: Bool
    /// When Stripe made the event (its `created`, in whole seconds): the order events are applied in.
    public var createdAt: Date
    /// When the server received it.
    public var receivedAt: Date
    /// The event's JSON, as received.
    public var payload: String
    /// When it was applied; `nil` while it is still to apply.
    public var appliedAt: Date?
    /// How many attempts to apply it failed.
    public var attempts: Int
    /// Why the last attempt to apply it failed; `nil` before any failed, and once it is applied.
    public var failure: String?

    /// Creates an event from its parts; an event just received is still to apply, with no attempt
    /// failed (the defaults).
    public init(
        bundleID: String, eventID: String, type: String, objectID: String?, livemode: Bool, createdAt: Date,
        receivedAt: Date, payload: String, appliedAt: Date? = nil, attempts: Int = 0, failure: String? = nil
    ) {
        self.bundleID = bundleID
        self.eventID = eventID
        self.type = type
        self.objectID = objectID
        self.livemode = livemode
        self.createdAt = createdAt
        self.receivedAt = receivedAt
        self.payload = payload
        self.appliedAt = appliedAt
        self.attempts = attempts
        self.failure = failure
    }
}
