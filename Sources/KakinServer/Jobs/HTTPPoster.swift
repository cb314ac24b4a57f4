public import Foundation
import KakinLedger
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

    /// Sends one request as ``send(method:url:headers:body:)`` does, and returns the response's
    /// headers too (names in lowercase). By default, none.
    func answer(method: String, url: URL, headers: [String: String], body: Data?) async throws -> HTTPAnswer
}

/// A response: its status, body and headers (names in lowercase).
public struct HTTPAnswer: Sendable {
    /// The HTTP status.
    public var status: Int
    /// The body.
    public var body: Data
    /// The headers, by lowercase name.
    public var headers: [String: String]

    /// An answer from its parts.
    public init(status: Int, body: Data, headers: [String: String] = [:]) {
        self.status = status
        self.body = body
        self.headers = headers
    }
}

extension HTTPExchange {
    /// The status and body of ``send(method:url:headers:body:)``, without headers.
    public func answer(method: String, url: URL, headers: [String: String], body: Data?) async throws -> HTTPAnswer {
        let (status, data) = try await send(method: method, url: url, headers: headers, body: body)
        return HTTPAnswer(status: status, body: data)
    }
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
        let answer = try await answer(method: method, url: url, headers: headers, body: body)
        return (answer.status, answer.body)
    }

    public func answer(method: String, url: URL, headers: [String: String], body: Data?) async throws -> HTTPAnswer {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        let (data, response) = try await URLSession.shared.cancellableData(for: request)
        let http = response as? HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return HTTPAnswer(status: http?.statusCode ?? 0, body: data, headers: fields)
    }
}
