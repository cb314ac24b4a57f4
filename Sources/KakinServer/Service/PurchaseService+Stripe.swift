import Foundation
public import KakinLedger

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
        guard let app = apps[bundleID] else {
            throw ServerError(.unknownApp, "this server does not serve \(bundleID)")
        }
        guard let account = app.stripe, let stripeEvents else {
            throw ServerError(.notConfigured, "\(bundleID) has no Stripe account (apps[].stripe)")
        }
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
            StripeEventRecord(
                bundleID: bundleID, eventID: event.id, type: event.type, objectID: event.objectID,
                livemode: event.livemode, createdAt: event.created, receivedAt: receivedAt,
                payload: String(decoding: body, as: UTF8.self)))
        logger.info(
            "stripe.event",
            metadata: [
                "bundle_id": "\(bundleID)", "event_id": "\(event.id)", "type": "\(event.type)",
                "status": "\(recorded ? "recorded" : "duplicate")",
            ])
        return StripeEventReceipt(status: recorded ? "recorded" : "duplicate", eventId: event.id, type: event.type)
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
