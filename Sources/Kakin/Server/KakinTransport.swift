public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request to the purchase server.
public struct KakinHTTPRequest: Hashable, Sendable {
    /// The HTTP method, e.g. `GET`.
    public var method: String
    /// The full URL, query included.
    public var url: URL
    /// The headers to send.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?

    /// Creates a request.
    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// The server's reply: status, headers (names in lower case) and the exact body bytes.
public struct KakinHTTPReply: Hashable, Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The headers, names in lower case.
    public var headers: [String: String]
    /// The body, byte for byte as received (signatures cover these exact bytes).
    public var body: Data

    /// Creates a reply, lower-casing the header names so lookups need not care about case.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        // Names differing only in case are one field: their values are joined, as HTTP does.
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }) { "\($0), \($1)" }
        self.body = body
    }
}

/// How the SDK reaches the purchase server. ``URLSessionTransport`` by default; inject another
/// to add headers, route through your own networking stack, or test without a network.
///
/// A transport throws only when no reply arrived; it throws ``KakinError`` with code
/// ``KakinError/Code/network`` (retryable) for anything that may pass, such as no connection.
public protocol KakinTransport: Sendable {
    /// Sends one request and returns the reply, whatever its status.
    func send(_ request: KakinHTTPRequest) async throws(KakinError) -> KakinHTTPReply
}

/// Foundation's `URLSession` as a ``KakinTransport``.
public struct URLSessionTransport: KakinTransport {
    /// Seconds before a request without an answer fails as a network error.
    public var timeout: TimeInterval

    /// Creates a transport whose requests fail after `timeout` seconds without an answer.
    public init(timeout: TimeInterval = 30) {
        self.timeout = timeout
    }

    /// Sends the request with `URLSession.shared`; when no reply arrives, throws a retryable
    /// ``KakinError/Code/network`` error.
    public func send(_ request: KakinHTTPRequest) async throws(KakinError) -> KakinHTTPReply {
        let reply = try await JSONHTTP(timeout: timeout).send(
            request.method, request.url, headers: request.headers, body: request.body)
        return KakinHTTPReply(status: reply.status, headers: reply.headers, body: reply.body)
    }
}
