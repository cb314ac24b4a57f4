public import AppStoreModels
import Foundation
import Synchronization

/// The App Store Server API's request limits as the sandbox enforces them: per endpoint, a number
/// of requests in each window of time (counted on the sandbox's clock, in windows aligned to
/// multiples of ``window`` since 1970), past which a request is answered 429 with
/// `RateLimitExceededError` (4290000) and a `Retry-After` header holding the UNIX time, in
/// milliseconds, at which the window ends. Endpoints without a limit are not counted.
public struct SandboxRateLimits: Sendable, Hashable {
    /// Requests allowed in one window, by endpoint.
    public var requests: [ServerAPIEndpoint: Int]
    /// The length of a window.
    public var window: Duration

    /// Limits from their parts.
    public init(requests: [ServerAPIEndpoint: Int], window: Duration) {
        self.requests = requests
        self.window = window
    }

    /// Apple's limits for the sandbox environment: a tenth of the published production rates, over
    /// an hour (Get Transaction History: 18,000 requests an hour).
    public static let apple = SandboxRateLimits(
        requests: Dictionary(
            uniqueKeysWithValues: ServerAPIEndpoint.allCases.compactMap { endpoint in
                endpoint.requestsPerHour(in: .sandbox).map { (endpoint, $0) }
            }),
        window: .seconds(3600))
}

/// Counts the requests of each endpoint in the current window.
final class SandboxRateLimiter: Sendable {
    let limits: SandboxRateLimits
    /// The length of a window in milliseconds.
    private let length: Int64
    private let counts = Mutex<[ServerAPIEndpoint: (window: Int64, count: Int)]>([:])

    init(_ limits: SandboxRateLimits) {
        self.limits = limits
        let window = limits.window.components
        length = max(1, window.seconds * 1000 + window.attoseconds / 1_000_000_000_000_000)
    }

    /// Counts a request to `endpoint` at `now`; `nil` when it is allowed, otherwise the end of the
    /// window that is full.
    func admit(_ endpoint: ServerAPIEndpoint, at now: Date) -> Date? {
        guard let allowed = limits.requests[endpoint] else { return nil }
        let window = Int64((now.timeIntervalSince1970 * 1000).rounded(.down)) / length
        return counts.withLock { counts in
            var current = counts[endpoint] ?? (window, 0)
            if current.window != window { current = (window, 0) }
            guard current.count < allowed else {
                return Date(timeIntervalSince1970: Double((window + 1) * length) / 1000)
            }
            current.count += 1
            counts[endpoint] = current
            return nil
        }
    }
}
