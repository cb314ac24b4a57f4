public import Foundation
import KakinLedger

extension PurchaseService {
    /// What became of one of Stripe's webhooks.
    public struct StripeEventReceipt: Sendable, Equatable, Codable {
        /// `recorded` the first time the event arrives, `duplicate` when it was recorded before.
        public var status: String
        /// Stripe's ID of the event.
        public var eventId: String
        /// What happened, as Stripe names it.
        public var type: String
    }

    /// `POST /v1/notifications/stripe/{bundleId}`: one of the events of the app's Stripe account,
    /// posted by Stripe. The signature is the authentication: the `Stripe-Signature` header must be
    /// the HMAC of the body as received under one of the app's webhook secrets, made at most five
    /// minutes ago by the real clock (a captured request sent again later is refused). The event must
    /// be of the account's mode (a test-mode event is refused by a live account, and the other way
    /// round). It is then recorded once in the app's inbox of Stripe events
    /// (`StripeEventLedger.recordStripeEvent(_:)`), whole, to be applied in the order Stripe made
    /// the events; a delivery of an event recorded before changes nothing.
    ///
    /// - Throws: ``ServerError/Code/unknownApp`` for an app this server does not serve;
    ///   ``ServerError/Code/notConfigured`` for an app without a Stripe account;
    ///   ``ServerError/Code/verificationFailed`` for a missing, malformed, wrong or stale signature,
    ///   or an event of the other mode; ``ServerError/Code/invalidRequest`` for a body that is not
    ///   one of Stripe's events.
    public func receiveStripeEvent(bundleID: String, signature: String?, body: Data) async throws -> StripeEventReceipt {
        let (account, stripeEvents) = try stripeInbox(of: bundleID)
        let receivedAt = realNow()
        do {
            try StripeSignature(secrets: account.webhookSecrets).verify(header: signature, body: body, now: receivedAt)
        } catch {
            throw ServerError(.verificationFailed, "Stripe-Signature: \(error.reason)", cause: "\(error)")
        }
        let event: StripeEvent
        do { event = try StripeEvent(json: body) } catch {
            throw ServerError(.invalidRequest, "the body is not one of Stripe's events: \(error.reason)")
        }
        guard account.accepts(livemode: event.livemode) else {
            throw ServerError(
                .verificationFailed,
                "a \(event.livemode ? "live" : "test")-mode event for an account of the other mode",
                cause: "wrongEnvironment")
        }
        let recorded = try await stripeEvents.recordStripeEvent(
            StripeEventRecord(event, bundleID: bundleID, receivedAt: receivedAt, payload: body))
        logger.info(
            "stripe.event",
            metadata: [
                "bundle_id": "\(bundleID)", "event_id": "\(event.id)", "type": "\(event.type)",
                "status": "\(recorded ? "recorded" : "duplicate")",
            ])
        return StripeEventReceipt(status: recorded ? "recorded" : "duplicate", eventId: event.id, type: event.type)
    }

    /// What one reconciliation of an app's Stripe events found.
    public struct StripeEventsReconciled: Sendable, Equatable {
        /// The events Stripe listed from the checkpoint on.
        public var listed: Int
        /// Those the inbox did not hold yet: webhooks that never arrived, or were refused.
        public var recorded: Int
    }

    /// Records the app's Stripe events that no webhook brought: lists the account's events
    /// (`GET /v1/events`) made from the second of the newest event the inbox holds on (every event
    /// Stripe still keeps, thirty days, when it holds none), and records those it lacks, as a
    /// webhook would have. Every page is read before anything is recorded, oldest first, so a run
    /// that fails part way records nothing it would skip later (the checkpoint is the newest event
    /// recorded). Events of the other mode than the account's are left out.
    ///
    /// - Throws: ``ServerError/Code/unknownApp``; ``ServerError/Code/notConfigured`` for an app
    ///   without a Stripe account; ``ServerError/Code/appleUnavailable`` (retryable) when Stripe does
    ///   not answer or refuses (its error in the message).
    public func reconcileStripeEvents(bundleID: String) async throws -> StripeEventsReconciled {
        let (account, stripeEvents) = try stripeInbox(of: bundleID)
        let client = StripeClient(secretKey: account.secretKey, baseURL: account.apiBase, exchange: exchange)
        let checkpoint = try await stripeEvents.newestStripeEvent(bundleID: bundleID)
        var listed: [StripeEvent] = []
        var query = StripeEventQuery(createdFrom: checkpoint, limit: 100)
        do {
            while true {
                let page = try await client.listEvents(query)
                listed += page.data
                guard page.hasMore, let last = page.data.last else { break }
                query.startingAfter = last.id
            }
        } catch {
            throw ServerError(.appleUnavailable, "Stripe's events could not be listed: \(error)", cause: "stripeUnavailable")
        }
        var recorded = 0
        let receivedAt = realNow()
        for event in listed.sorted(by: { ($0.created, $0.id) < ($1.created, $1.id) })
        where account.accepts(livemode: event.livemode) {
            let isNew = try await stripeEvents.recordStripeEvent(
                StripeEventRecord(event, bundleID: bundleID, receivedAt: receivedAt, payload: event.json))
            if isNew { recorded += 1 }
        }
        logger.info(
            "stripe.reconciled",
            metadata: ["bundle_id": "\(bundleID)", "listed": "\(listed.count)", "recorded": "\(recorded)"])
        return StripeEventsReconciled(listed: listed.count, recorded: recorded)
    }

    /// The app's Stripe account and the inbox its events are recorded in.
    func stripeInbox(of bundleID: String) throws -> (StripeAccount, any StripeEventLedger) {
        guard let account = try app(bundleID).stripe, let stripeEvents else {
            throw ServerError(.notConfigured, "\(bundleID) has no Stripe account (apps[].stripe)")
        }
        return (account, stripeEvents)
    }
}

extension StripeEventRecord {
    /// `event` as the inbox keeps it for `bundleID`, received at `receivedAt`, its JSON `payload`
    /// kept whole; still to apply.
    init(_ event: StripeEvent, bundleID: String, receivedAt: Date, payload: Data) {
        self.init(
            bundleID: bundleID, eventID: event.id, type: event.type, objectID: event.objectID,
            livemode: event.livemode, createdAt: event.created, receivedAt: receivedAt,
            payload: String(decoding: payload, as: UTF8.self))
    }
}

extension StripeSignature.Failure {
    /// What the failure says, in words.
    var reason: String {
        switch self {
        case .missingHeader: "the header is missing"
        case .malformedHeader: "the header has no timestamp or no v1 signature"
        case .timestampOutsideTolerance: "signed more than five minutes ago"
        case .signatureMismatch: "no signature matches the body under the app's webhook secrets"
        }
    }
}
