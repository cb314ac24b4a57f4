import CoreMetrics
import Foundation
import KakinLedger
public import Prometheus
import Synchronization

/// The server's metrics, made with swift-metrics on a Prometheus registry of their own (no
/// process-wide bootstrap, so several servers in one process, as in tests, never mix their numbers).
///
/// Served at `/metrics` in Prometheus' text format:
/// - `kakin_http_requests_total{route, method, status}` and the latency histogram
///   `kakin_http_request_duration_seconds{route, method, status}`;
/// - `kakin_verification_failures_total{cause}`: signatures, chains, apps and environments refused;
/// - `kakin_ledger_events_total{type}`: transactions recorded, revoked, transferred, currency spent;
/// - `kakin_webhook_backlog`: ledger events not yet delivered to every endpoint, and
///   `kakin_webhook_delivery_lag_seconds`: from an event to its delivery;
/// - `kakin_process_open_fds` and `kakin_process_max_fds`: descriptors open, and the soft limit;
/// - `kakin_http_connections`, `kakin_http_max_connections` and
///   `kakin_http_connections_closed_for_room`: client connections open, the cap, and idle
///   ones closed to make room for new ones (see ``ConnectionLimiter``);
/// - `kakin_sign_in_failures_total{kind}` and `kakin_sign_in_refused_total{kind}`: wrong
///   dashboard passwords and API keys (`kind` is `dashboard` or `api`), and attempts refused
///   because their address or account must wait;
/// - `kakin_rate_limited_total{kind}`: publishable-key requests refused with 429 because their
///   client address sent too many reads, uploads, aliases or offer requests (``RateLimitPolicy``);
/// - `kakin_offer_signatures_total{kind, outcome}`: offers signed (`signed`) or refused
///   (`ineligible`, `unknownOffer`, `notConfigured`);
/// - `kakin_apple_requests_total{kind, outcome}`: calls made to the App Store Server API on the
///   server's own initiative (`consumptionInformation`, `appAccountToken`): `sent`, `skipped` (no
///   consent, no key), `retried` and `failed`;
/// - `kakin_retention_answers_total{bundle_id, message}`: answers to the App Store's retention
///   message requests, by app and the message chosen (`default` for no choice).
public final class ServerMetrics: Sendable {
    /// The registry `/metrics` renders.
    public let registry: PrometheusCollectorRegistry
    /// The swift-metrics factory writing into ``registry``.
    public let factory: PrometheusMetricsFactory

    /// Creates the metrics on `registry`, with latency buckets from half a millisecond to ten seconds.
    public convenience init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.init(registry: registry, uptime: { .now })
    }

    /// Creates the metrics on `registry`; `uptime` is the monotonic clock of the full-disk
    /// readiness window (a test's own).
    public init(
        registry: PrometheusCollectorRegistry, uptime: @escaping @Sendable () -> ContinuousClock.Instant
    ) {
        self.uptime = uptime
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
        ]
        self.factory = factory
    }

    /// The instruments of each label set seen, so that a request or an event does not look them
    /// up in the registry again (which checks the names and takes the registry's lock); at most
    /// ``maxCachedLabelSets`` of each kind, then made anew each time.
    private let requestInstruments = Mutex<[RequestLabels: RequestInstruments]>([:])
    private let ledgerEventCounters = Mutex<[String: CoreMetrics.Counter]>([:])
    static let maxCachedLabelSets = 1_000

    private struct RequestLabels: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    private struct RequestInstruments: Sendable {
        let count: CoreMetrics.Counter
        let duration: CoreMetrics.Timer
    }

    /// One HTTP request answered.
    public func request(route: String, method: String, status: Int, duration: Duration) {
        let labels = RequestLabels(route: route, method: method, status: status)
        let instruments = Self.cached(labels, in: requestInstruments) {
            let dimensions = [("route", route), ("method", method), ("status", "\(status)")]
            return RequestInstruments(
                count: CoreMetrics.Counter(
                    label: "kakin_http_requests_total", dimensions: dimensions, factory: factory),
                duration: CoreMetrics.Timer(
                    label: "kakin_http_request_duration_seconds", dimensions: dimensions, factory: factory))
        }
        instruments.count.increment()
        let nanoseconds = duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        instruments.duration.recordNanoseconds(nanoseconds)
    }

    /// The instruments kept for `key`, or new ones from `make`, kept while there is room.
    private static func cached<Key: Hashable & Sendable, Value: Sendable>(
        _ key: Key, in cache: borrowing Mutex<[Key: Value]>, make: () -> Value
    ) -> Value {
        if let kept = cache.withLock({ $0[key] }) { return kept }
        let made = make()
        cache.withLock { kept in
            if kept.count < maxCachedLabelSets { kept[key] = made }
        }
        return made
    }

    /// A signed payload refused, by the verifier's code.
    public func verificationFailure(cause: String) {
        Counter(label: "kakin_verification_failures_total", dimensions: [("cause", cause)], factory: factory)
            .increment()
    }

    /// A revocation check's outcome (`good`, `revoked`, `unavailable`, `passedUnchecked`) under
    /// its mode: `passedUnchecked` counts chains accepted without a usable OCSP answer.
    public func revocationCheck(outcome: String, mode: String) {
        Counter(
            label: "kakin_revocation_checks_total", dimensions: [("outcome", outcome), ("mode", mode)],
            factory: factory
        ).increment()
    }

    /// A ledger event written (`transaction.recorded`, `transaction.revoked`, …).
    public func ledgerEvent(_ type: String) {
        Self.cached(type, in: ledgerEventCounters) {
            CoreMetrics.Counter(label: "kakin_ledger_events_total", dimensions: [("type", type)], factory: factory)
        }.increment()
    }

    /// A webhook delivered, `lag` seconds after its ledger event was written.
    public func webhookDelivered(after lag: TimeInterval) {
        webhookLag.recordSeconds(max(0, lag))
    }

    private var webhookLag: CoreMetrics.Timer {
        CoreMetrics.Timer(label: "kakin_webhook_delivery_lag_seconds", factory: factory)
    }

    /// A wrong secret presented (`kind`: `dashboard` or `api`).
    public func signInFailure(kind: String) {
        Counter(label: "kakin_sign_in_failures_total", dimensions: [("kind", kind)], factory: factory).increment()
    }

    /// One offer signing request: `signed`, or why it was refused.
    public func offerSignature(kind: String, outcome: String) {
        Counter(
            label: "kakin_offer_signatures_total", dimensions: [("kind", kind), ("outcome", outcome)], factory: factory
        ).increment()
    }

    /// One answer to the App Store's `Get Retention Message` requests, by app and the message it
    /// chose (`default` for no choice: the App Store's own). Message IDs come from the apps'
    /// configured rules, so the label set is bounded by the configuration.
    public func retentionAnswer(bundleID: String, messageID: String?) {
        Counter(
            label: "kakin_retention_answers_total",
            dimensions: [("bundle_id", bundleID), ("message", messageID ?? RetentionSaves.defaultMessage)],
            factory: factory
        ).increment()
    }

    /// One call owed to Apple handled: `sent`, `skipped`, `retried` or `failed`.
    public func appleRequest(kind: String, outcome: String) {
        Counter(
            label: "kakin_apple_requests_total", dimensions: [("kind", kind), ("outcome", outcome)], factory: factory
        ).increment()
    }

    /// An attempt refused unchecked, because its address or account must wait.
    public func signInRefused(kind: String) {
        Counter(label: "kakin_sign_in_refused_total", dimensions: [("kind", kind)], factory: factory).increment()
    }

    /// A publishable-key request refused because its client address sent too many of `kind`
    /// (`kakin_rate_limited_total{kind}`: `read`, `upload`, `alias` or `offer`).
    public func rateLimited(kind: String) {
        Counter(label: "kakin_rate_limited_total", dimensions: [("kind", kind)], factory: factory).increment()
    }

    /// A step of the subscription metrics' job worked out purchases again and folded changes the
    /// writes appended, `count` in all (`kakin_metrics_purchases_updated_total`).
    public func metricsUpdated(_ count: Int) {
        Counter(label: "kakin_metrics_purchases_updated_total", factory: factory).increment(by: Int64(count))
    }

    /// Whether the subscription metrics had caught up with every purchase changed when the job
    /// last looked (`kakin_metrics_caught_up`, 1 or 0): 0 while it works through a backlog.
    public func metricsCaughtUp(_ caughtUp: Bool) {
        Gauge(label: "kakin_metrics_caught_up", factory: factory).record(caughtUp ? 1 : 0)
    }

    /// A write the ledger refused because its disk is full (`kakin_ledger_disk_full_total`); `/ready`
    /// reports the disk full for ``diskFullReadiness`` after the last one.
    public func ledgerDiskFull() {
        Counter(label: "kakin_ledger_disk_full_total", factory: factory).increment()
        let now = uptime()
        lastDiskFull.withLock { $0 = now }
    }

    /// How long `/ready` reports a full disk after the ledger last refused a write for it: a load
    /// balancer sends writes elsewhere meanwhile, and tries again after.
    public static let diskFullReadiness: Duration = .seconds(5)

    /// When the ledger last refused a write for a full disk, if within ``diskFullReadiness``.
    public var recentDiskFull: Duration? {
        guard let last = lastDiskFull.withLock({ $0 }) else { return nil }
        let since = uptime() - last
        return since < Self.diskFullReadiness ? since : nil
    }

    private let lastDiskFull = Mutex<ContinuousClock.Instant?>(nil)
    /// The monotonic clock of the full-disk readiness window.
    private let uptime: @Sendable () -> ContinuousClock.Instant

    /// Ledger events still waiting for delivery to some webhook endpoint.
    public func webhookBacklog(_ count: Int) {
        Gauge(label: "kakin_webhook_backlog", factory: factory).record(count)
    }

    /// The connection limiter whose figures `/metrics` shows.
    private let limiter = Mutex<ConnectionLimiter?>(nil)

    /// Shows `limiter`'s figures in ``render()``: `kakin_http_connections` (open now),
    /// `kakin_http_max_connections` and `kakin_http_connections_closed_for_room`.
    public func observe(_ limiter: ConnectionLimiter) {
        self.limiter.withLock { $0 = limiter }
    }

    /// The metrics in Prometheus' text exposition format, with the process's open descriptors and
    /// its limit read now.
    public func render() -> String {
        if let limiter = limiter.withLock({ $0 }) {
            Gauge(label: "kakin_http_connections", factory: factory).record(limiter.openConnections)
            Gauge(label: "kakin_http_max_connections", factory: factory).record(limiter.maxConnections)
            Gauge(label: "kakin_http_connections_closed_for_room", factory: factory).record(limiter.closedForRoom)
        }
        if let open = ProcessLimits.openDescriptors {
            Gauge(label: "kakin_process_open_fds", factory: factory).record(open)
        }
        if let limit = ProcessLimits.openFileLimit {
            Gauge(label: "kakin_process_max_fds", factory: factory).record(Int64(clamping: limit))
        }
        return registry.emitToString()
    }
}
