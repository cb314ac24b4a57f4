public import Foundation
import KakinWire

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Fetches one byte range of a hosted-content package.
///
/// ``DownloadManager`` asks for the package chunk by chunk. `headers` already holds everything to
/// send: the request's own headers, `Range: bytes=a-b` for the chunk and, once the package's
/// `ETag` is known, `If-Range`. `range` repeats the chunk's position for transports that do not
/// speak HTTP. The server answers 206 with `Content-Range` for the chunk, or 200 with the whole
/// package (it ignores ranges, or the `If-Range` tag is stale: the package changed).
public protocol DownloadTransport: Sendable {
    /// Sends one request and returns the status, the response headers and the body.
    func fetch(
        url: URL, headers: [String: String], range: (offset: Int64, length: Int64?)
    ) async throws -> (status: Int, headers: [String: String], body: Data)
}

/// A ``DownloadTransport`` over `URLSession` (FoundationNetworking on Linux).
public struct URLSessionDownloadTransport: DownloadTransport {
    private let session: URLSession
    private let timeout: TimeInterval

    /// A transport over `session`; each chunk request times out after `timeout` seconds.
    public init(session: URLSession = .shared, timeout: TimeInterval = 60) {
        self.session = session
        self.timeout = timeout
    }

    /// Sends a GET with `headers` and no caching.
    public func fetch(
        url: URL, headers: [String: String], range: (offset: Int64, length: Int64?)
    ) async throws -> (status: Int, headers: [String: String], body: Data) {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "GET"
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (body, response) = try await session.cancellableData(for: request)
        guard let http = response as? HTTPURLResponse else {
            throw KakinError(.network, "\(url.host ?? "the server") did not answer over HTTP")
        }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String { fields[name] = "\(value)" }
        }
        return (http.statusCode, fields, body)
    }
}
