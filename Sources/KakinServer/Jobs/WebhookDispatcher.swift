import Crypto
public import Foundation

/// Where ledger events are posted, and the secret that signs them.
public struct WebhookEndpoint: Codable, Hashable, Sendable {
    public var url: URL
    public var secret: String

    public init(url: URL, secret: String) {
        self.url = url
        self.secret = secret
    }
}

/// Posts every ledger event to every endpoint from the durable outbox, HMAC-signed, retrying
/// failures with backoff. An event is delivered at least once per endpoint; receivers deduplicate
/// by its `id`.
///
/// Several servers sharing one database can all run it: each run leases the events it takes
/// (``LedgerStore/claimDueEvents(endpoint:now:limit:leaseUntil:)``), so each event is sent by one
/// server, once, in the normal case. When a server dies holding a lease, the lease expires after
/// ``leaseDuration`` and another server sends the event.
///
/// Signature header: `X-Kakin-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
public struct WebhookDispatcher: Sendable {
    public let store: any LedgerStore
    public let endpoints: [WebhookEndpoint]
    public let exchange: any HTTPExchange
    public let now: @Sendable () -> Date
    /// Delay before the next attempt after a failure.
    public let retryDelay: TimeInterval
    /// How long a run holds the events it took. Events of a batch not sent before their lease
    /// ends are left for the next run, so no other server can be sending them at the same time.
    public let leaseDuration: TimeInterval

    public init(
        store: any LedgerStore, endpoints: [WebhookEndpoint], exchange: any HTTPExchange = URLSessionExchange(),
        retryDelay: TimeInterval = 60, leaseDuration: TimeInterval = 300,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
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
            while true {
                let (sent, claimed) = try await deliverBatch(to: endpoint, limit: limit, onDelivered: onDelivered)
                delivered += sent
                // Stop at a failure too: an endpoint that is down is tried again at the next run.
                if claimed < limit || sent < claimed { break }
            }
        }
        return delivered
    }

    /// One claim of at most `limit` due events for `endpoint`, sent in order: the deliveries that
    /// succeeded, and how many events the claim took.
    private func deliverBatch(
        to endpoint: WebhookEndpoint, limit: Int, onDelivered: (TimeInterval) -> Void
    ) async throws -> (delivered: Int, claimed: Int) {
        var delivered = 0
        let claimed = now()
        let leaseUntil = claimed.addingTimeInterval(leaseDuration)
        let events = try await store.claimDueEvents(
            endpoint: endpoint.url.absoluteString, now: claimed, limit: limit, leaseUntil: leaseUntil)
        for event in events {
            let date = now()
            guard date < leaseUntil else { break }
            let body = Self.body(event)
            let timestamp = Int64(date.timeIntervalSince1970)
            let signature = Self.signature(body: body, timestamp: timestamp, secret: endpoint.secret)
            var success = false
            do {
                let (status, _) = try await exchange.send(
                    method: "POST", url: endpoint.url,
                    headers: [
                        "Content-Type": "application/json", "X-Kakin-Signature": "t=\(timestamp),v1=\(signature)",
                    ],
                    body: body)
                success = (200..<300).contains(status)
            } catch {
                success = false
            }
            try await store.markDelivery(
                eventID: event.id, endpoint: endpoint.url.absoluteString, delivered: success, at: date,
                retryAt: success ? nil : date.addingTimeInterval(retryDelay))
            if success {
                delivered += 1
                onDelivered(date.timeIntervalSince(event.createdAt))
            }
        }
        return (delivered, events.count)
    }

    /// Ledger events not yet delivered to every endpoint (summed over endpoints).
    public func backlog() async throws -> Int {
        var total = 0
        for endpoint in endpoints {
            total += try await store.undeliveredEventCount(endpoint: endpoint.url.absoluteString)
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
        if let user = event.appUserID { object["appUserId"] = user }
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
