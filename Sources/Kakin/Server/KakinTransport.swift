public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request to the purchase server.
public struct KakinHTTPRequest: Hashable, Sendable {
    public var method: String
    public var url: URL
    public var headers: [String: String]
    public var body: Data?

    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// The server's reply: status, headers (names in lower case) and the exact body bytes.
public struct KakinHTTPReply: Hashable, Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(uniqueKeysWithValues: headers.map { ($0.key.lowercased(), $0.value) })
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

    public init(timeout: TimeInterval = 30) {
        self.timeout = timeout
    }

    public func send(_ request: KakinHTTPRequest) async throws(KakinError) -> KakinHTTPReply {
        let reply = try await JSONHTTP(timeout: timeout).send(
            request.method, request.url, headers: request.headers, body: request.body)
        return KakinHTTPReply(status: reply.status, headers: reply.headers, body: reply.body)
    }
}
