public import Foundation
import KakinHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one `Get Retention Message` request to the app's endpoint. The sandbox owns the deadline
/// (``RetentionTiming``), so a transport only posts and waits.
public protocol RetentionRequestTransport: Sendable {
    /// POSTs `body` (JSON) to `url` and returns the answer's status and body, whatever the status;
    /// throws when no answer came (no connection, a reset). Cancelled when the deadline passes.
    func post(_ body: Data, to url: URL) async throws -> (status: Int, body: Data)
}

/// Posts with `URLSession`; a cancelled post stops its request.
public struct URLSessionRetentionTransport: RetentionRequestTransport {
    /// How long a post may take at most, in seconds; the sandbox's deadline is usually shorter.
    public let timeout: TimeInterval

    /// Creates a transport whose posts give up after `timeout` seconds.
    public init(timeout: TimeInterval = 10) {
        self.timeout = timeout
    }

    public func post(_ body: Data, to url: URL) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = body
        let (data, response) = try await URLSession.shared.cancellableData(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }
}

/// The clock the sandbox measures retention answers with, and the wait that ends a request at its
/// deadline: both injected, so tests neither sleep nor depend on how fast the machine is.
public struct RetentionTiming: Sendable {
    /// A monotonic reading: the time since an arbitrary origin. Response times are differences
    /// of two readings.
    public var reading: @Sendable () -> Duration
    /// Waits `duration`; the request still unanswered when it returns has timed out. Cancelled
    /// (and expected to throw) once the answer came first.
    public var wait: @Sendable (Duration) async throws -> Void

    /// Timing from its parts.
    public init(
        reading: @escaping @Sendable () -> Duration, wait: @escaping @Sendable (Duration) async throws -> Void
    ) {
        self.reading = reading
        self.wait = wait
    }

    /// The machine's monotonic clock and real waits.
    public static var live: RetentionTiming {
        let clock = ContinuousClock()
        let origin = clock.now
        return RetentionTiming(
            reading: { origin.duration(to: clock.now) }, wait: { try await clock.sleep(for: $0) })
    }
}
