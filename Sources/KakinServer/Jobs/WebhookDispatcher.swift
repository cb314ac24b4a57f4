import Crypto
public import Foundation
public import KakinLedger
import Synchronization

/// Where ledger events are posted, and the secret that signs them.
public struct WebhookEndpoint: Codable, Hashable, Sendable {
    /// Where the events are posted.
    public var url: URL
    /// The key of the HMAC-SHA256 in each post's `X-Kakin-Signature`, shared with the receiver.
    public var secret: String

    /// Creates an endpoint from its URL and secret.
    public init(url: URL, secret: String) {
        self.url = url
        self.secret = secret
    }
}

/// Posts every ledger event to every endpoint from the durable outbox, HMAC-signed, retrying
/// failures with backoff. An event is delivered at least once per endpoint; receivers deduplicate
/// by its `id`. The events of one batch are posted several at a time (``concurrency``), and
/// their attempts recorded together once the batch is done.
///
/// Several servers sharing one database can all run it: each run leases the events it takes
/// (`OutboxLedger/claimDueEvents(endpoint:holder:now:limit:leaseUntil:)`), so each event is sent by one
/// server, once, in the normal case. When a server dies holding a lease, the lease expires after
/// ``leaseDuration`` and another server sends the event. The leases name the dispatcher
/// (``holder``): when a claim committed but its answer was lost with the connection to the
/// database, the dispatcher's next run takes those events back instead of waiting for the lease to
/// end. One dispatcher's runs must therefore not overlap. When the write that records a batch's
/// attempts fails, the dispatcher keeps them and records them first at its next run, so the events
/// it posted are not posted again once the ledger answers.
///
/// Signature header: `X-Kakin-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
public struct WebhookDispatcher: Sendable {
    /// The ledger's outbox, which holds the events.
    public let outbox: any OutboxLedger
    /// Where every event is posted.
    public let endpoints: [WebhookEndpoint]
    /// Carries the posts.
    public let exchange: any HTTPExchange
    /// The clock of leases, retries and signatures.
    public let now: @Sendable () -> Date
    /// Delay before the next attempt after a failure.
    public let retryDelay: TimeInterval
    /// How long a run holds the events it took. Events of a batch not sent before their lease
    /// ends are left for the next run, so no other server can be sending them at the same time.
    public let leaseDuration: TimeInterval
    /// How many posts of one batch are in flight at once. Events of a batch may therefore arrive
    /// out of order; each carries its `id` (increasing as events are written) and `createdAt`.
    public let concurrency: Int
    /// Whose the leases of this dispatcher's claims are: a name of its own.
    public let holder = UUID().uuidString
    /// Attempts made whose record the ledger did not take, by endpoint URL: recorded before the
    /// next claim. At most one batch per endpoint, as no claim succeeds while they wait.
    private let unrecorded = UnrecordedAttempts()

    /// Creates a dispatcher; each value defaults to the one described on its property.
    public init(
        outbox: any OutboxLedger, endpoints: [WebhookEndpoint], exchange: any HTTPExchange = URLSessionExchange(),
        retryDelay: TimeInterval = 60, leaseDuration: TimeInterval = 300, concurrency: Int = 8,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.concurrency = concurrency
        self.outbox = outbox
        self.endpoints = endpoints
        self.exchange = exchange
        self.retryDelay = retryDelay
        self.leaseDuration = leaseDuration
        self.now = now
    }

    /// Sends everything due, `limit` events at a time per endpoint, until a claim finds fewer than
    /// `limit` or a delivery fails (so a burst of events is sent in one run, not one batch per
    /// interval, and an endpoint that is down costs one batch per run); returns how
    /// many deliveries succeeded. `onDelivered` is told, for each, how long after its event it
    /// was delivered.
    @discardableResult
    public func deliverDue(limit: Int = 100, onDelivered: (TimeInterval) -> Void = { _ in }) async throws -> Int {
        var delivered = 0
        for endpoint in endpoints {
            try await unrecorded.record(to: endpoint.url.absoluteString, in: outbox)
            while true {
                let (sent, claimed) = try await deliverBatch(to: endpoint, limit: limit, onDelivered: onDelivered)
                delivered += sent
                // Stop at a failure too: an endpoint that is down is tried again at the next run.
                if claimed < limit || sent < claimed { break }
            }
        }
        return delivered
    }

    /// One claim of at most `limit` due events for `endpoint`, posted ``concurrency`` at a time,
    /// their attempts then recorded in one write: the deliveries that succeeded, and how many
    /// events the claim took. An event whose lease ended before its turn is left for the next run.
    private func deliverBatch(
        to endpoint: WebhookEndpoint, limit: Int, onDelivered: (TimeInterval) -> Void
    ) async throws -> (delivered: Int, claimed: Int) {
        let claimed = now()
        let leaseUntil = claimed.addingTimeInterval(leaseDuration)
        let events = try await outbox.claimDueEvents(
            endpoint: endpoint.url.absoluteString, holder: holder, now: claimed, limit: limit, leaseUntil: leaseUntil)
        let attempts = await withTaskGroup(of: (LedgerEvent, DeliveryAttempt)?.self) { group in
            var attempts: [(LedgerEvent, DeliveryAttempt)] = []
            var next = 0
            func startNext() {
                guard next < events.count else { return }
                let event = events[next]
                next += 1
                group.addTask { await post(event, to: endpoint, leaseUntil: leaseUntil).map { (event, $0) } }
            }
            for _ in 0..<max(1, concurrency) { startNext() }
            for await attempt in group {
                if let attempt { attempts.append(attempt) }
                startNext()
            }
            return attempts
        }
        unrecorded.keep(attempts.map(\.1), for: endpoint.url.absoluteString)
        try await unrecorded.record(to: endpoint.url.absoluteString, in: outbox)
        var delivered = 0
        for (event, attempt) in attempts where attempt.delivered {
            delivered += 1
            onDelivered(attempt.date.timeIntervalSince(event.createdAt))
        }
        return (delivered, events.count)
    }

    /// Posts one event, signed; `nil` when its lease ended before its turn.
    private func post(_ event: LedgerEvent, to endpoint: WebhookEndpoint, leaseUntil: Date) async -> DeliveryAttempt? {
        let date = now()
        guard date < leaseUntil else { return nil }
        let body = Self.body(event)
        let timestamp = Int64(date.timeIntervalSince1970)
        let signature = Self.signature(body: body, timestamp: timestamp, secret: endpoint.secret)
        var success = false
        do {
            let (status, _) = try await exchange.send(
                method: "POST", url: endpoint.url,
                headers: ["Content-Type": "application/json", "X-Kakin-Signature": "t=\(timestamp),v1=\(signature)"],
                body: body)
            success = (200..<300).contains(status)
        } catch {
            success = false
        }
        return DeliveryAttempt(
            eventID: event.id, delivered: success, at: date, retryAt: success ? nil : date.addingTimeInterval(retryDelay))
    }

    /// Ledger events not yet delivered to every endpoint (summed over endpoints).
    public func backlog() async throws -> Int {
        var total = 0
        for endpoint in endpoints {
            total += try await outbox.undeliveredEventCount(endpoint: endpoint.url.absoluteString)
        }
        return total
    }

    /// The JSON posted for an event: its ID, type, app, customer, time and payload.
    static func body(_ event: LedgerEvent) -> Data {
        let payload = (try? JSONSerialization.jsonObject(with: event.payload)) ?? [:]
        var object: [String: Any] = [
            "id": event.id, "type": event.type, "bundleId": event.bundleID,
            "createdAt": Int64((event.createdAt.timeIntervalSince1970 * 1000).rounded()), "data": payload,
        ]
        if let user = event.appUserID { object["appUserId"] = CustomerIDRedaction.redacted(user) }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }

    /// Hex HMAC-SHA256 of `"<timestamp>.<body>"` with `secret`: what receivers recompute.
    public static func signature(body: Data, timestamp: Int64, secret: String) -> String {
        var message = Data("\(timestamp).".utf8)
        message.append(body)
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))
        return code.map { String(format: "%02x", $0) }.joined()
    }
}

/// Delivery attempts waiting to be recorded, by endpoint URL: those of the batch just posted, or of
/// one whose record failed.
private final class UnrecordedAttempts: Sendable {
    private let attempts = Mutex<[String: [DeliveryAttempt]]>([:])

    func keep(_ made: [DeliveryAttempt], for endpoint: String) {
        attempts.withLock { $0[endpoint, default: []] += made }
    }

    /// Records what waits for `endpoint` in one write; kept for the next call when the write fails.
    func record(to endpoint: String, in outbox: any OutboxLedger) async throws {
        let waiting = attempts.withLock { $0.removeValue(forKey: endpoint) ?? [] }
        guard !waiting.isEmpty else { return }
        do {
            try await outbox.markDeliveries(waiting, endpoint: endpoint)
        } catch {
            keep(waiting, for: endpoint)
            throw error
        }
    }
}
