import AppStoreModels
import Foundation
import KakinCore
import KakinLedger

extension PurchaseService {
    /// What one run of ``applyStripeEvents(bundleID:limit:)`` did.
    public struct StripeEventsApplied: Sendable, Equatable {
        /// Events applied (including those that change nothing for Kakin: a customer created…).
        public var applied: Int
        /// Events whose application failed and were left to apply again.
        public var failed: Int
        /// Whether the run stopped at an event that may apply later (Stripe or the ledger did not
        /// answer), leaving it and the events after it for the next run.
        public var stoppedEarly: Bool
    }

    /// How long a web subscription whose renewal payment failed keeps its access while Stripe
    /// retries the charge: Stripe's default retry schedule ends two weeks after the first failure.
    static let stripeGracePeriod: TimeInterval = 14 * 86_400

    /// Applies the app's recorded Stripe events (`StripeEventLedger.stripeEventsToApply`), oldest
    /// first, read `limit` at a time. Each event is applied from the state Stripe holds now of the
    /// object it names (read again through the API), so an event applied late or twice grants
    /// nothing twice, and a webhook's body is never trusted beyond naming the object:
    ///
    /// - `payment_intent.succeeded`: a web purchase of a one-time product (its intent carries the
    ///   customer and product of the checkout) is recorded and granted as an App Store purchase of
    ///   the same product would be; its transaction ID is the intent's.
    /// - `invoice.paid`, `invoice.payment_succeeded`: a subscription's period is recorded (the
    ///   invoice's ID; the subscription's ID as the original transaction ID; the invoice line's
    ///   period), and its renewal state from the subscription.
    /// - `invoice.payment_failed`, `customer.subscription.*`: the subscription's renewal state:
    ///   `past_due` is a billing problem with a grace period of 14 days from the end
    ///   of the paid period; `unpaid` a billing problem without one; `cancel_at_period_end` or
    ///   `canceled` ends it when its paid period ends.
    /// - `charge.refunded`, `charge.refund.updated`: the refunded share of the charge's purchase is
    ///   revoked and what it granted taken back under the clawback policy.
    /// - `charge.dispute.closed`, `charge.dispute.funds_withdrawn`: a lost dispute revokes the
    ///   whole purchase.
    ///
    /// Other events, and events of objects no checkout of Kakin made, are marked applied with
    /// nothing done. An event that cannot apply (a product the account does not sell) is marked
    /// failed with the reason and the run goes on; when Stripe or the ledger does not answer, the
    /// event is marked failed and the run stops, so that events apply in order.
    public func applyStripeEvents(bundleID: String, limit: Int = 100) async throws -> StripeEventsApplied {
        let (account, stripeEvents) = try stripeInbox(of: bundleID)
        let app = try app(bundleID)
        let web = StripeWebPurchases(
            service: self, app: app, account: account,
            client: StripeClient(secretKey: account.secretKey, baseURL: account.apiBase, exchange: exchange))
        var result = StripeEventsApplied(applied: 0, failed: 0, stoppedEarly: false)
        var cursor: StripeEventRecord?
        pages: while true {
            let page = try await stripeEvents.stripeEventsToApply(bundleID: bundleID, after: cursor, limit: limit)
            for event in page {
                do {
                    try await web.apply(event)
                    try await stripeEvents.markStripeEventApplied(bundleID: bundleID, eventID: event.eventID, at: now())
                    result.applied += 1
                } catch {
                    let failure = StripeApplyFailure(error)
                    try await stripeEvents.markStripeEventFailed(
                        bundleID: bundleID, eventID: event.eventID, failure: String(failure.reason.prefix(2_000)))
                    result.failed += 1
                    logger.warning(
                        "stripe.apply_failed",
                        metadata: [
                            "bundle_id": "\(bundleID)", "event_id": "\(event.eventID)", "type": "\(event.type)",
                            "reason": "\(failure.reason)", "retryable": "\(failure.isRetryable)",
                        ])
                    if failure.isRetryable {
                        result.stoppedEarly = true
                        break pages
                    }
                }
            }
            guard page.count == limit, let last = page.last else { break }
            cursor = last
        }
        if result.applied + result.failed > 0 {
            logger.info(
                "stripe.applied",
                metadata: [
                    "bundle_id": "\(bundleID)", "applied": "\(result.applied)", "failed": "\(result.failed)",
                ])
        }
        return result
    }
}

extension PurchaseService {
    /// Applies the app's Stripe events (``applyStripeEvents(bundleID:limit:)``) in this server's
    /// one run for the app: when a run is under way, it runs
    /// once more after it instead (the events recorded meanwhile). Failures are logged.
    public func applyStripeEventsNow(bundleID: String) async {
        await stripeRuns.run(bundleID) {
            do { _ = try await applyStripeEvents(bundleID: bundleID) } catch {
                logger.warning("stripe.apply_failed", metadata: ["bundle_id": "\(bundleID)", "error": "\(error)"])
            }
        }
    }
}

/// The runs applying Stripe events in one server: one at a time per app, and a run asked for
/// while one is under way made once after it.
actor StripeEventRuns {
    private var running: Set<String> = []
    private var again: Set<String> = []

    /// Runs `body` for `bundleID` now, or once more after the run under way.
    func run(_ bundleID: String, _ body: @Sendable () async -> Void) async {
        guard running.insert(bundleID).inserted else {
            again.insert(bundleID)
            return
        }
        repeat {
            again.remove(bundleID)
            await body()
        } while again.contains(bundleID)
        running.remove(bundleID)
    }
}

/// Why an event could not apply, and whether it may apply later as it is.
struct StripeApplyFailure: Error {
    var reason: String
    var isRetryable: Bool

    /// A failure that applying again cannot mend (a product the account does not sell…).
    static func permanent(_ reason: String) -> StripeApplyFailure {
        StripeApplyFailure(reason: reason, isRetryable: false)
    }

    init(reason: String, isRetryable: Bool) {
        self.reason = reason
        self.isRetryable = isRetryable
    }

    /// The failure `error` is: Stripe's own errors are retryable as Stripe says; a ledger that
    /// does not answer is retryable; a refusal by the ledger (a purchase another customer owns…)
    /// is not.
    init(_ error: any Error) {
        switch error {
        case let failure as StripeApplyFailure:
            self = failure
        case let error as StripeError:
            self.init(reason: "Stripe: \(error)", isRetryable: error.isRetryable)
        case let error as ServerError:
            self.init(
                reason: error.message,
                isRetryable: error.code == .storageUnavailable || error.code == .appleUnavailable)
        case let error as LedgerStoreError:
            let refusal = error.code == .invalidArgument || error.code == .idempotencyKeyReused
            self.init(reason: "\(error)", isRetryable: !refusal)
        default:
            self.init(reason: "\(error)", isRetryable: true)
        }
    }
}

/// The web purchases of one app's Stripe account: what each of Stripe's events does to the ledger.
struct StripeWebPurchases {
    typealias Metadata = StripeMetadata

    let service: PurchaseService
    let app: AppConfiguration
    let account: StripeAccount
    let client: StripeClient

    func apply(_ event: StripeEventRecord) async throws {
        guard let objectID = event.objectID else { return }
        switch event.type {
        case "payment_intent.succeeded":
            try await recordPayment(objectID)
        case "invoice.paid", "invoice.payment_succeeded":
            let invoice = try await client.retrieveInvoice(objectID)
            guard let subscription = invoice.subscription else { return }
            try await recordPeriod(of: invoice, subscription: try await client.retrieveSubscription(subscription), at: event.createdAt)
        case "invoice.payment_failed":
            let invoice = try await client.retrieveInvoice(objectID)
            guard let subscription = invoice.subscription else { return }
            try await recordRenewal(of: try await client.retrieveSubscription(subscription), at: event.createdAt)
        case _ where event.type.hasPrefix("customer.subscription."):
            let subscription = try await client.retrieveSubscription(objectID)
            if let latest = subscription.latestInvoice {
                let invoice = try await client.retrieveInvoice(latest)
                if invoice.status == .paid {
                    try await recordPeriod(of: invoice, subscription: subscription, at: event.createdAt)
                    return
                }
            }
            try await recordRenewal(of: subscription, at: event.createdAt)
        case "charge.refunded", "charge.refund.updated":
            let charge = try await client.retrieveCharge(objectID)
            guard charge.amountRefunded > 0, charge.amount > 0 else { return }
            let share = Int(
                (Int64(charge.amountRefunded) * Int64(RecordedTransaction.wholeShare) / Int64(charge.amount))
                    .clamped(to: 1...Int64(RecordedTransaction.wholeShare)))
            try await revoke(charge, share: share, reason: nil, at: event.createdAt)
        case "charge.dispute.closed", "charge.dispute.funds_withdrawn":
            let dispute = try await client.retrieveDispute(objectID)
            guard dispute.status == .lost || event.type == "charge.dispute.funds_withdrawn" else { return }
            try await revoke(
                try await client.retrieveCharge(dispute.charge), share: RecordedTransaction.wholeShare,
                reason: .other, at: event.createdAt)
        default:
            return
        }
    }

    // MARK: One-time purchases

    /// Records the web purchase a succeeded payment intent made, when a checkout made it;
    /// returns its transaction, or `nil` for a payment that is not one of Kakin's.
    @discardableResult
    private func recordPayment(_ id: String) async throws -> RecordedTransaction? {
        let intent = try await client.retrievePaymentIntent(id)
        // A subscription's payment is recorded from its invoice.
        guard intent.status == .succeeded, intent.invoice == nil,
            let productID = intent.metadata[Metadata.productID]
        else { return nil }
        try checkSold(productID, price: intent.metadata[Metadata.price])
        let productType = try oneTimeType(of: productID)
        let quantity = max(1, Int(intent.metadata[Metadata.quantity] ?? "1") ?? 1)
        let owner = try await owner(metadata: intent.metadata, customer: intent.customer)
        var record = RecordedTransaction(
            transactionID: intent.id, originalTransactionID: intent.id, bundleID: app.bundleID, appUserID: owner,
            productID: productID, productType: productType, quantity: quantity, purchaseDate: intent.created,
            environment: account.environment, source: .notification, recordedAt: service.now(), store: .stripe)
        (record.price, record.currency) = StripeAmount.unitPrice(
            amount: intent.amount, quantity: quantity, currency: intent.currency)
        _ = try await service.ingest(record, app: app)
        return record
    }

    /// The type of a one-time web product: as the app's product types or its catalog say.
    private func oneTimeType(of productID: String) throws -> ProductType {
        if let type = (app.productTypes ?? service.productTypes)[productID] {
            guard type != .autoRenewableSubscription else {
                throw StripeApplyFailure.permanent(
                    "\(productID) is an auto-renewable subscription, sold on the web through a Stripe subscription, not a single payment")
            }
            return type
        }
        let product = (app.catalog?.products ?? []).first { $0.productID == productID }
        switch product?.type {
        case .consumable?: return .consumable
        case .nonConsumable?: return .nonConsumable
        default:
            throw StripeApplyFailure.permanent(
                "the type of \(productID) is not known: name it in the app's catalog or productTypes")
        }
    }

    // MARK: Subscriptions

    /// Records the period a paid invoice of `subscription` pays for, and the subscription's
    /// renewal state.
    private func recordPeriod(of invoice: StripeInvoice, subscription: StripeSubscription, at date: Date) async throws {
        guard invoice.status == .paid else { return try await recordRenewal(of: subscription, at: date) }
        guard let productID = try product(of: subscription) else { return }
        let line = invoice.lines.first { $0.periodEnd != nil && ($0.plan == nil || $0.plan == subscription.items.first?.priceID) }
        guard let start = line?.periodStart ?? subscription.currentPeriodStart,
            let end = line?.periodEnd ?? subscription.currentPeriodEnd, end > start
        else {
            throw StripeApplyFailure.permanent("invoice \(invoice.id) names no period of subscription \(subscription.id)")
        }
        let owner = try await owner(metadata: subscription.metadata, customer: subscription.customer)
        let isTrial = invoice.amountPaid == 0 && subscription.trialEnd.map { $0 >= end } == true
        var record = RecordedTransaction(
            transactionID: invoice.id, originalTransactionID: subscription.id, bundleID: app.bundleID,
            appUserID: owner, productID: productID, productType: .autoRenewableSubscription, purchaseDate: start,
            expiresDate: end, environment: account.environment, source: .notification, recordedAt: service.now(),
            periodType: isTrial ? .trial : .normal, store: .stripe)
        (record.price, record.currency) = StripeAmount.unitPrice(
            amount: invoice.amountPaid, quantity: 1, currency: invoice.currency)
        _ = try await service.ingest(record, app: app)
        try await recordRenewal(of: subscription, at: date, paidThrough: end)
    }

    /// Stores the renewal state `subscription` is in as Stripe holds it, a billing problem seen at
    /// `date` (the event's); `paidThrough`
    /// is the end of the period just recorded, else the latest the ledger holds.
    private func recordRenewal(of subscription: StripeSubscription, at date: Date, paidThrough: Date? = nil) async throws {
        guard try product(of: subscription) != nil else { return }
        var paidEnd = paidThrough
        if paidEnd == nil {
            paidEnd = try await latestExpiry(of: subscription)
        }
        // The state is Stripe's as read now, whatever the event's age: it replaces any read before.
        var renewal = SubscriptionRenewal(
            bundleID: app.bundleID, originalTransactionID: subscription.id,
            autoRenewStatus: subscription.cancelAtPeriodEnd ? .off : .on, signedDate: max(date, service.realNow()),
            updatedAt: service.now(), periodExpiresAt: paidEnd)
        switch subscription.status {
        case .pastDue:
            renewal.billingIssueDetectedAt = date
            renewal.gracePeriodExpiresAt = paidEnd.map { $0.addingTimeInterval(PurchaseService.stripeGracePeriod) }
        case .unpaid:
            renewal.billingIssueDetectedAt = date
            renewal.expirationIntent = .billingError
        case .canceled, .incompleteExpired:
            renewal.autoRenewStatus = .off
            renewal.expirationIntent = .customerCancelled
        default:
            break
        }
        _ = try await service.recordRenewal(renewal)
    }

    /// When the latest period the ledger holds of `subscription` ends: the latest expiry among
    /// its owner's transactions of it.
    private func latestExpiry(of subscription: StripeSubscription) async throws -> Date? {
        let owner = try await owner(metadata: subscription.metadata, customer: subscription.customer)
        return try await service.customers.customer(bundleID: app.bundleID, appUserID: owner).transactions
            .filter { $0.originalTransactionID == subscription.id }.compactMap(\.expiresDate).max()
    }

    /// The App Store product a subscription of the account sells, or `nil` for a subscription no
    /// checkout of Kakin made.
    private func product(of subscription: StripeSubscription) throws -> String? {
        let price = subscription.items.first?.priceID
        guard let productID = subscription.metadata[Metadata.productID] ?? price.flatMap({ account.product(price: $0)?.productID })
        else { return nil }
        try checkSold(productID, price: price)
        return productID
    }

    // MARK: Refunds and disputes

    /// Revokes `share` of the purchase `charge` paid for.
    private func revoke(_ charge: StripeCharge, share: Int, reason: RevocationReason?, at date: Date) async throws {
        let intent = try await charge.paymentIntent.asyncMap { try await client.retrievePaymentIntent($0) }
        guard let transactionID = charge.invoice ?? intent?.invoice ?? charge.paymentIntent else { return }
        var stored = try await service.purchases.transaction(id: transactionID)
        if stored == nil, let intent, intent.invoice == nil {
            // A refund that arrives before its payment was applied: the payment first.
            stored = try await recordPayment(intent.id)
        }
        if stored == nil, let invoiceID = charge.invoice ?? intent?.invoice {
            let invoice = try await client.retrieveInvoice(invoiceID)
            if let subscription = invoice.subscription {
                try await recordPeriod(
                    of: invoice, subscription: try await client.retrieveSubscription(subscription), at: date)
                stored = try await service.purchases.transaction(id: transactionID)
            }
        }
        guard var record = stored, record.store == .stripe else { return }
        guard record.revocationDate == nil || record.revokedShare < share else { return }
        record.revocationDate = date
        record.revocationReason = reason
        let partial = share < RecordedTransaction.wholeShare
        record.revocationType = partial ? .refundProrated : nil
        record.revocationPercentage = partial ? share : nil
        _ = try await service.ingest(record, app: app)
    }

    // MARK: Shared

    /// Refuses a product the account does not sell on the web (at `price`, when named).
    private func checkSold(_ productID: String, price: String?) throws {
        let products = account.products(for: productID)
        guard !products.isEmpty else {
            throw StripeApplyFailure.permanent("\(productID) is not one of the account's web products (apps[].stripe.products)")
        }
        if let price, !products.contains(where: { $0.price == price }) {
            throw StripeApplyFailure.permanent("\(price) is not a price of \(productID) in apps[].stripe.products")
        }
    }

    /// The app's customer a web purchase belongs to: the one the checkout named on the payment or
    /// subscription, else on the Stripe customer.
    private func owner(metadata: [String: String], customer: String?) async throws -> String {
        if let owner = metadata[Metadata.appUserID], !owner.isEmpty { return owner }
        if let customer {
            let found = try await client.retrieveCustomer(customer)
            if let owner = found.metadata[Metadata.appUserID], !owner.isEmpty { return owner }
        }
        throw StripeApplyFailure.permanent("the purchase names no customer of the app (\(Metadata.appUserID))")
    }
}

extension Comparable {
    fileprivate func clamped(to range: ClosedRange<Self>) -> Self {
        min(max(self, range.lowerBound), range.upperBound)
    }
}

extension Optional {
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
