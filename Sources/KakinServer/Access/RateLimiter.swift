import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// How much publishable-key traffic one client address may send (`rateLimits` in the
/// configuration): a token bucket per address and kind of request.
///
/// The publishable key ships in every copy of the app, so anyone can send what it opens. The
/// limits are far above what one device, or many behind one address, send in real use, and far
/// below what a script reading customers by the hundred sends: a burst of 300 customer reads from
/// one address within a second meets the read limit. Each address has its own buckets, so other
/// addresses are served meanwhile. Secret-key requests are never limited here.
public struct RateLimitPolicy: Sendable, Hashable {
    /// A kind of request, each with its own bucket.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// `GET` requests: customers, transaction pages, the catalog, content downloads.
        case read
        /// Uploads of signed transactions and receipts, and app-transaction links.
        case upload
        /// Log-ins (`POST /v1/customers/{anonymous user}/alias`).
        case alias
        /// Offer signatures (`POST /v1/customers/{user}/offers/sign`).
        case offer

        /// The configuration key of this kind's limit.
        var key: String {
            switch self {
            case .read: "reads"
            case .upload: "uploads"
            case .alias: "aliases"
            case .offer: "offers"
            }
        }
    }

    /// A bucket's size and how fast it refills.
    public struct Limit: Sendable, Hashable {
        /// Requests refilled each second: the rate an address may keep up.
        public var perSecond: Int
        /// The bucket's size: how many requests an address may send at once after a quiet spell.
        public var burst: Int

        /// Creates a limit.
        public init(perSecond: Int, burst: Int) {
            self.perSecond = perSecond
            self.burst = burst
        }
    }

    /// Whether publishable-key requests are limited at all (`rateLimits.enabled`). Turn it off only
    /// for load tests from one address.
    public var enabled = true
    /// The limit of each kind.
    public var limits: [Kind: Limit] = [
        .read: Limit(perSecond: 20, burst: 200), .upload: Limit(perSecond: 20, burst: 200),
        .alias: Limit(perSecond: 2, burst: 20), .offer: Limit(perSecond: 5, burst: 50),
    ]
    /// The most addresses remembered; beyond it, addresses whose buckets are full again are forgotten.
    public var maxClients = 100_000

    /// The default limits.
    public init() {}

    /// The limit of `kind`.
    public func limit(_ kind: Kind) -> Limit {
        limits[kind] ?? Limit(perSecond: 20, burst: 200)
    }

    /// Reads the `rateLimits` object:
    /// `{"enabled": true, "reads": {"perSecond": 20, "burst": 200}, "uploads": …, "aliases": …, "offers": …}`.
    static func read(_ reader: ConfigurationReader) throws(ServerError) -> RateLimitPolicy {
        var policy = RateLimitPolicy()
        policy.enabled = try reader.boolean("enabled") ?? policy.enabled
        for kind in Kind.allCases {
            guard let limit = try reader.object(kind.key) else { continue }
            var value = policy.limit(kind)
            value.perSecond = Int(try limit.integer("perSecond", in: 1...1_000_000) ?? Int64(value.perSecond))
            value.burst = Int(try limit.integer("burst", in: 1...10_000_000) ?? Int64(value.burst))
            try limit.finish()
            policy.limits[kind] = value
        }
        try reader.finish()
        return policy
    }

    /// The kind of a publishable-key request, from its method and path; `nil` for paths that are
    /// not the API's.
    static func kind(method: HTTPRequest.Method, path: String) -> Kind? {
        guard path.hasPrefix("/v1/") else { return nil }
        if method == .get || method == .head { return .read }
        if path.hasSuffix("/alias") { return .alias }
        if path.hasSuffix("/offers/sign") { return .offer }
        return .upload
    }
}

/// Token buckets per client address and kind of request, in this server's memory: each server of
/// a deployment limits what reaches it. A lock guards a dictionary; a request costs one lookup.
public final class ClientRateLimiter: Sendable {
    /// The limits.
    public let policy: RateLimitPolicy
    /// Seconds on a monotonic clock.
    private let uptime: @Sendable () -> Double
    private let buckets = Mutex<[Key: Bucket]>([:])

    private struct Key: Hashable {
        var client: String
        var kind: RateLimitPolicy.Kind
    }

    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    /// Creates a limiter; `uptime` is a monotonic clock in seconds (injected by tests).
    public init(policy: RateLimitPolicy, uptime: (@Sendable () -> Double)? = nil) {
        self.policy = policy
        self.uptime =
            uptime
            ?? {
                let elapsed = ContinuousClock.now - Self.origin
                let (seconds, attoseconds) = elapsed.components
                return Double(seconds) + Double(attoseconds) / 1e18
            }
    }

    private static let origin = ContinuousClock.now

    /// Takes one request of `kind` from `client`'s bucket: `nil` when it may go on, else the whole
    /// seconds to wait before one more is allowed.
    public func take(_ kind: RateLimitPolicy.Kind, client: String) -> Int? {
        guard policy.enabled else { return nil }
        let limit = policy.limit(kind)
        let rate = Double(limit.perSecond)
        let burst = Double(limit.burst)
        let now = uptime()
        return buckets.withLock { buckets -> Int? in
            let key = Key(client: client, kind: kind)
            var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
            bucket.tokens = min(burst, bucket.tokens + max(0, now - bucket.updated) * rate)
            bucket.updated = now
            guard bucket.tokens >= 1 else {
                buckets[key] = bucket
                return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
            }
            bucket.tokens -= 1
            if buckets[key] == nil, buckets.count >= policy.maxClients { Self.forgetIdle(&buckets, now: now, policy) }
            buckets[key] = bucket
            return nil
        }
    }

    /// Forgets the buckets that are full again (their addresses sent nothing for a while); when
    /// none is, forgets them all rather than grow without bound.
    private static func forgetIdle(_ buckets: inout [Key: Bucket], now: Double, _ policy: RateLimitPolicy) {
        buckets = buckets.filter { key, bucket in
            let limit = policy.limit(key.kind)
            return bucket.tokens + (now - bucket.updated) * Double(limit.perSecond) < Double(limit.burst)
        }
        if buckets.count >= policy.maxClients { buckets.removeAll(keepingCapacity: true) }
    }
}
