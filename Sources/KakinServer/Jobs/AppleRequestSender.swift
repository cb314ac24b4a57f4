import AppStoreModels
public import Foundation
public import KakinLedger

/// Makes the calls the server owes the App Store Server API (`AppleRequestRecord`):
/// - for each CONSUMPTION_REQUEST, Send Consumption Information (version 2) for the transaction,
///   within Apple's 12-hour window, made from the ledger's facts and the app's
///   ``ConsumptionPolicy``;
/// - Set App Account Token, when a purchase arrived without a token or moved to another customer,
///   so Apple's records name the customer the ledger does.
///
/// Each call is made once: it is taken under a lease (so servers sharing the ledger never make it
/// twice at the same time), and marked `sent` when Apple accepted it. A failure worth retrying
/// (Apple or the network unavailable) is tried again with a doubling wait (30 s, 1 min, 2 min, …,
/// at most 1 hour) until the call's window closes; Apple's refusal ends it as `failed`.
public struct AppleRequestSender: Sendable {
    /// What one run did.
    public struct Report: Hashable, Sendable {
        /// Calls Apple accepted.
        public var sent = 0
        /// Calls to try again later.
        public var retried = 0
        /// Calls given up or skipped.
        public var failed = 0

        /// Creates a report; nothing done unless given.
        public init(sent: Int = 0, retried: Int = 0, failed: Int = 0) {
            self.sent = sent
            self.retried = retried
            self.failed = failed
        }
    }

    /// The service whose apps' keys make the calls, and whose ledger answers what they say.
    public let service: PurchaseService
    /// Where the calls owed are kept.
    public let calls: any AppleCallLedger
    /// How long a server holds the calls it took.
    public let leaseDuration: TimeInterval
    /// Whose the leases of this sender's claims are. Its next run takes back calls it holds (a claim
    /// whose answer was lost with the connection to the database), so its runs must not overlap.
    public let holder = UUID().uuidString
    /// The first wait after a failure worth retrying; each further failure doubles it.
    public let firstRetry: TimeInterval
    /// The longest wait between two attempts.
    public let maximumRetry: TimeInterval

    /// Creates a sender of the calls `calls` holds, made for the apps of `service`.
    public init(
        service: PurchaseService, calls: any AppleCallLedger, leaseDuration: TimeInterval = 120,
        firstRetry: TimeInterval = 30, maximumRetry: TimeInterval = 3600
    ) {
        self.service = service
        self.calls = calls
        self.leaseDuration = leaseDuration
        self.firstRetry = firstRetry
        self.maximumRetry = maximumRetry
    }

    /// Creates a sender of the calls the ledger of `service` holds (``PurchaseService/appleCalls``).
    public init(
        service: PurchaseService, leaseDuration: TimeInterval = 120, firstRetry: TimeInterval = 30,
        maximumRetry: TimeInterval = 3600
    ) {
        self.init(
            service: service, calls: service.appleCalls, leaseDuration: leaseDuration, firstRetry: firstRetry,
            maximumRetry: maximumRetry)
    }

    /// Makes every call due now, up to `limit`.
    @discardableResult
    public func sendDue(limit: Int = 50) async throws -> Report {
        let now = service.now()
        let due = try await calls.claimDueAppleRequests(
            holder: holder, now: now, limit: limit, leaseUntil: now.addingTimeInterval(leaseDuration))
        var report = Report()
        for request in due {
            let outcome = await send(request, at: now)
            try await calls.finishAppleRequest(
                request.id, state: outcome.state, sentBody: outcome.body, error: outcome.error,
                retryAt: outcome.retryAt, at: now)
            switch outcome.state {
            case .sent: report.sent += 1
            case .pending: report.retried += 1
            default: report.failed += 1
            }
            let label = outcome.state == .pending ? "retried" : outcome.state.rawValue
            service.metrics?.appleRequest(kind: request.kind.rawValue, outcome: label)
            service.logger.info(
                "apple.\(request.kind.rawValue).\(label)",
                metadata: [
                    "bundleId": .string(request.bundleID), "transactionId": .string(request.transactionID),
                    "attempt": .stringConvertible(request.attempts), "error": .string(outcome.error ?? ""),
                ])
        }
        return report
    }

    private struct Outcome {
        var state: AppleRequestRecord.State
        var body: String?
        var error: String?
        var retryAt: Date?
    }

    private func send(_ request: AppleRequestRecord, at now: Date) async -> Outcome {
        let deadline = request.requestedAt.addingTimeInterval(request.kind.window)
        guard now < deadline else {
            return Outcome(state: .failed, error: "the call's window closed before it could be made")
        }
        guard let app = service.apps[request.bundleID], let access = app.serverAPI else {
            return Outcome(state: .skipped, error: "the app has no App Store Server API key")
        }
        let client = AppStoreServerAPIClient(
            access: access, exchange: service.exchange, bundleID: app.bundleID, now: service.realNow)
        let text: String
        do {
            switch request.kind {
            case .consumptionInformation:
                guard let policy = app.consumption, policy.customersConsented else {
                    return Outcome(
                        state: .skipped, error: "the app's customers did not consent (consumption.customersConsented)")
                }
                let body: ConsumptionRequest
                do {
                    body = try await ConsumptionFacts.request(
                        for: request.transactionID, app: app, policy: policy, service: service, now: now)
                } catch {
                    return retry(request, now: now, deadline: deadline, error: "the ledger could not be read: \(error)")
                }
                text = Self.json(body)
                try await client.put(
                    body, .sendConsumptionInformation, path: "inApps/v2/transactions/consumption/\(request.transactionID)",
                    environment: request.environment)
            case .appAccountToken:
                let body = UpdateAppAccountTokenRequest(appAccountToken: request.detail)
                text = Self.json(body)
                try await client.put(
                    body, .setAppAccountToken, path: "inApps/v1/transactions/\(request.transactionID)/appAccountToken",
                    environment: request.environment)
            }
        } catch where error.isRetryable {
            return retry(
                request, now: now, deadline: deadline, error: error.message,
                notBefore: error.retryAfterSeconds.map { now.addingTimeInterval(TimeInterval($0)) })
        } catch {
            return Outcome(state: .failed, error: error.message)
        }
        return Outcome(state: .sent, body: text)
    }

    /// The next attempt of `request`: after a wait that doubles with each attempt, and not before
    /// `notBefore` (when Apple's rate limit names a time).
    private func retry(
        _ request: AppleRequestRecord, now: Date, deadline: Date, error: String, notBefore: Date? = nil
    ) -> Outcome {
        let wait = min(maximumRetry, firstRetry * pow(2, Double(max(0, request.attempts - 1))))
        let next = max(now.addingTimeInterval(wait), notBefore ?? now)
        guard next < deadline else {
            return Outcome(state: .failed, error: "\(error); the call's window closes before another attempt")
        }
        return Outcome(state: .pending, error: error, retryAt: next)
    }

    private static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self)
    }
}

/// The facts the ledger has about a purchase whose refund the customer asked for.
enum ConsumptionFacts {
    /// The body of Send Consumption Information for `transactionID`:
    /// - `deliveryStatus` `DELIVERED` when an app delivered the purchase to a customer (the ledger
    ///   has its owner), `UNDELIVERED_OTHER` when no app ever did;
    /// - `consumptionPercentage`: for a consumable, the share of what it credited that is no longer
    ///   in the customer's balance (spent, as far as the ledger can tell); for a subscription, the
    ///   share of its period that has passed; absent for a non-consumable;
    /// - `refundPreference` as the app's policy says.
    static func request(
        for transactionID: String, app: AppConfiguration, policy: ConsumptionPolicy, service: PurchaseService, now: Date
    ) async throws -> ConsumptionRequest {
        let transaction = try await service.transaction(id: transactionID)
        var delivered = false
        var consumption: Int?
        if let transaction, let owner = transaction.appUserID {
            delivered = true
            switch transaction.productType {
            case .consumable:
                let customer = try await service.customer(bundleID: app.bundleID, appUserID: owner)
                // What the purchase credited, not what a reversed refund gave back of it.
                let credits = customer.ledger.filter {
                    $0.kind == .credit && $0.transactionID == transactionID
                        && !$0.idempotencyKey.hasPrefix(LedgerRules.reinstatementKeyPrefix)
                }
                var credited: Int64 = 0
                var remaining: Int64 = 0
                for currency in Set(credits.map(\.currency)) {
                    let amount = credits.filter { $0.currency == currency }.reduce(0) { $0 + $1.amount }
                    credited += amount
                    remaining += min(amount, max(0, customer.balances[currency] ?? 0))
                }
                if credited > 0 { consumption = Int((credited - remaining) * 100_000 / credited) }
            case .autoRenewableSubscription, .nonRenewingSubscription:
                if let end = transaction.expiresDate, end > transaction.purchaseDate {
                    let share = now.timeIntervalSince(transaction.purchaseDate) / end.timeIntervalSince(transaction.purchaseDate)
                    consumption = Int((min(1, max(0, share)) * 100_000).rounded(.down))
                }
            default: break
            }
        }
        return ConsumptionRequest(
            customerConsented: true, sampleContentProvided: policy.sampleContentProvided,
            deliveryStatus: delivered ? .delivered : .undeliveredOther, consumptionPercentage: consumption,
            refundPreference: policy.refundPreference(
                delivered: delivered, consumption: consumption, purchaseDate: transaction?.purchaseDate ?? now, now: now))
    }
}
