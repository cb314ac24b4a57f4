public import Foundation
public import KakinLedger
import KakinWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Makes one HTTP request and returns the status and body. Injected into the jobs, so tests can
/// answer for the network.
public protocol HTTPExchange: Sendable {
    /// Sends one request and returns the response's status and body, whatever the status; throws
    /// only when no response came (no connection, a timeout).
    func send(
        method: String, url: URL, headers: [String: String], body: Data?
    ) async throws -> (status: Int, body: Data)
}

/// `HTTPExchange` over `URLSession`.
public struct URLSessionExchange: HTTPExchange {
    /// How long a request may take, in seconds, before it fails.
    public let timeout: TimeInterval

    /// Creates an exchange whose requests fail after `timeout` seconds.
    public init(timeout: TimeInterval = 30) {
        self.timeout = timeout
    }

    public func send(
        method: String, url: URL, headers: [String: String], body: Data?
    ) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        let (data, response) = try await URLSession.shared.cancellableData(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }
}
