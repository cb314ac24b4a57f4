import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinLedger
import Synchronization

/// Requests to the App Store Server API for one app: a fresh bearer token per request, the
/// host of the data's environment, and Apple's error bodies read into a ``ServerError``
/// (a 429 or 5xx, or no answer at all, is the retryable `appleUnavailable`; a 401 is a bad key).
///
/// Apple limits each endpoint's requests per app (`ServerAPIEndpoint` in AppStoreModels). At most
/// ``ServerAPIAccess/concurrentRequestsPerEndpoint`` requests to one endpoint run at once for the
/// app (the others wait their turn), and a request Apple refuses with 429 is sent again after the
/// time its `Retry-After` header names (UNIX milliseconds), or after 1, 2, 4… seconds without one,
/// up to ``attempts`` times and never waiting longer than ``longestWait`` in all; past that, the
/// refusal is thrown with the time to wait (``ServerError/retryAfterSeconds``).
struct AppStoreServerAPIClient: Sendable {
    let access: ServerAPIAccess
    let exchange: any HTTPExchange
    let bundleID: String

    /// A client for `bundleID` whose `Retry-After` waits are read on `now` (the service's clock).
    init(
        access: ServerAPIAccess, exchange: any HTTPExchange, bundleID: String, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.access = access
        self.exchange = exchange
        self.bundleID = bundleID
        self.now = now
    }
    /// How many times a request is sent in all when Apple answers 429.
    var attempts = 4
    /// The longest a request waits for Apple's rate limit, in all.
    var longestWait: Duration = .seconds(30)
    /// The clock that reads `Retry-After`.
    var now: @Sendable () -> Date
    /// Waits before a request is sent again (tests record the waits instead).
    var pause: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    /// Apple's answer to `GET <host>/<path>?<query>`, decoded as `Response`; `nil` for a 404 or
    /// an unknown transaction ID, when `missingIsNil` is set.
    func get<Response: Decodable>(
        _ type: Response.Type, _ endpoint: ServerAPIEndpoint, path: String, query: [URLQueryItem] = [],
        environment: AppStoreEnvironment
    ) async throws(ServerError) -> Response {
        guard
            let answer = try await get(
                type, endpoint, path: path, query: query, environment: environment, missingIsNil: false)
        else {
            throw ServerError(.notFound, "the App Store Server API knows no \(path)")
        }
        return answer
    }

    /// `PUT <host>/<path>` with `body` as JSON; returns when Apple answers 200 or 202. Apple's
    /// refusals are thrown as for a GET, with Apple's error code as ``ServerError/appleStatus``.
    func put<Body: Encodable>(
        _ body: Body, _ endpoint: ServerAPIEndpoint, path: String, environment: AppStoreEnvironment
    ) async throws(ServerError) {
        let (status, answer) = try await request("PUT", endpoint, path: path, environment: environment, body: body)
        guard status == 200 || status == 202 else { throw Self.failure(status: status, body: answer) }
    }

    /// `POST <host>/<path>?<query>` with `body` as JSON, Apple's answer decoded as `Response`.
    func post<Body: Encodable, Response: Decodable>(
        _ body: Body, as type: Response.Type, _ endpoint: ServerAPIEndpoint, path: String,
        query: [URLQueryItem] = [], environment: AppStoreEnvironment
    ) async throws(ServerError) -> Response {
        let (status, answer) = try await request(
            "POST", endpoint, path: path, query: query, environment: environment, body: body)
        guard status == 200 else { throw Self.failure(status: status, body: answer) }
        return try Self.decode(Response.self, from: answer)
    }

    /// Sends `method <host>/<path>?<query>`, with `body` as JSON when there is one.
    private func request(
        _ method: String, _ endpoint: ServerAPIEndpoint, path: String, query: [URLQueryItem] = [],
        environment: AppStoreEnvironment, body: (any Encodable)? = nil
    ) async throws(ServerError) -> (Int, Data) {
        guard let body else {
            return try await send(
                method, endpoint, path: path, query: query, environment: environment, body: nil, contentType: nil)
        }
        let data: Data
        do { data = try JSONEncoder().encode(body) } catch {
            throw ServerError(.internalError, "the request body cannot be encoded: \(error)")
        }
        return try await send(
            method, endpoint, path: path, query: query, environment: environment, body: data,
            contentType: "application/json")
    }

    /// Sends `method <host>/<path>?<query>` with `body` as it is (of type `contentType`), in its
    /// turn and again while Apple answers 429 and the waits allow; returns Apple's status and body,
    /// whatever the status. The Retention Messaging API's image upload sends PNG bytes this way.
    func send(
        _ method: String, _ endpoint: ServerAPIEndpoint, path: String, query: [URLQueryItem] = [],
        environment: AppStoreEnvironment, body: Data?, contentType: String?
    ) async throws(ServerError) -> (Int, Data) {
        var components = URLComponents(
            url: access.baseURL(for: environment).appendingPathComponent(path), resolvingAgainstBaseURL: false)
        if !query.isEmpty { components?.queryItems = query }
        guard let url = components?.url else { throw ServerError(.invalidConfiguration, "bad App Store Server API URL") }
        let headers = contentType.map { ["Content-Type": $0] } ?? [:]
        return try await exchange(method, endpoint, url: url, headers: headers, body: body)
    }

    /// Apple's answer read as `Response`; an unreadable one is `appleUnavailable`.
    static func decode<Response: Decodable>(
        _ type: Response.Type, from data: Data
    ) throws(ServerError) -> Response {
        do { return try JSONDecoder().decode(Response.self, from: data) } catch {
            throw ServerError(.appleUnavailable, "the App Store Server API answered an unreadable \(Response.self)")
        }
    }

    /// Sends one request, again while Apple answers 429 and the waits allow, in its turn among
    /// the app's requests to `endpoint`; throws `appleUnavailable` when nothing answered.
    private func exchange(
        _ method: String, _ endpoint: ServerAPIEndpoint, url: URL, headers: [String: String], body: Data?
    ) async throws(ServerError) -> (Int, Data) {
        var waited = Duration.zero
        var attempt = 1
        while true {
            let answer = try await access.turns.take(endpoint) { () async throws(ServerError) -> HTTPAnswer in
                try await send(method, url: url, headers: headers, body: body)
            }
            guard answer.status == 429 else { return (answer.status, answer.body) }
            let wait = retryWait(answer, attempt: attempt)
            guard attempt < attempts, waited + wait <= longestWait else {
                let refusal = Self.failure(status: answer.status, body: answer.body)
                throw ServerError(
                    refusal.code, refusal.message, appleStatus: refusal.appleStatus,
                    retryAfterSeconds: Int(wait.components.seconds) + 1)
            }
            do { try await pause(wait) } catch {
                throw ServerError(.appleUnavailable, "the App Store Server API's rate limit wait was cancelled")
            }
            waited += wait
            attempt += 1
        }
    }

    /// How long to wait after a 429: until Apple's `Retry-After` (UNIX milliseconds), or 1, 2, 4…
    /// seconds without one.
    private func retryWait(_ answer: HTTPAnswer, attempt: Int) -> Duration {
        if let text = answer.headers["retry-after"], let milliseconds = Int64(text) {
            let left = milliseconds - Int64((now().timeIntervalSince1970 * 1000).rounded())
            return .milliseconds(max(0, left))
        }
        return .seconds(1 << min(attempt - 1, 10))
    }

    /// Sends one request with a fresh bearer token; throws `appleUnavailable` when nothing answered.
    private func send(
        _ method: String, url: URL, headers: [String: String], body: Data?
    ) async throws(ServerError) -> HTTPAnswer {
        let token: String
        do {
            token = try AppStoreServerAPIToken.make(
                keyID: access.keyID, issuerID: access.issuerID, bundleID: bundleID, privateKey: access.privateKey)
        } catch {
            throw ServerError(.invalidConfiguration, "the App Store Server API token cannot be made: \(error)")
        }
        var all = headers
        all["Authorization"] = "Bearer \(token)"
        all["Accept"] = "application/json"
        do { return try await exchange.answer(method: method, url: url, headers: all, body: body) } catch {
            throw ServerError(.appleUnavailable, "the App Store Server API did not answer: \(error)")
        }
    }

    /// Apple's refusal as a server error: a 429 or 5xx is the retryable `appleUnavailable`, a 401
    /// a bad key, anything else Apple's error code and message.
    static func failure(status: Int, body: Data) -> ServerError {
        let apiError = try? JSONDecoder().decode(APIErrorResponse.self, from: body)
        return ServerError(
            status == 429 || status >= 500 ? .appleUnavailable : status == 401 ? .invalidConfiguration : .internalError,
            "the App Store Server API answered \(status) \(apiError?.errorCode?.rawValue ?? 0): \(apiError?.errorMessage ?? "")",
            appleStatus: apiError?.errorCode?.rawValue)
    }

    func get<Response: Decodable>(
        _ type: Response.Type, _ endpoint: ServerAPIEndpoint, path: String, query: [URLQueryItem] = [],
        environment: AppStoreEnvironment, missingIsNil: Bool
    ) async throws(ServerError) -> Response? {
        let (status, body) = try await request("GET", endpoint, path: path, query: query, environment: environment)
        guard status == 200 else {
            let apiError = try? JSONDecoder().decode(APIErrorResponse.self, from: body)
            if missingIsNil, status == 404 || apiError?.errorCode == .transactionIDNotFound { return nil }
            throw Self.failure(status: status, body: body)
        }
        return try Self.decode(Response.self, from: body)
    }
}

/// Turns at an endpoint: at most `limit` requests to each endpoint run at once; the others wait,
/// first come first served.
final class EndpointTurns: Sendable {
    private struct Queue {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    let limit: Int
    private let queues = Mutex<[ServerAPIEndpoint: Queue]>([:])

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `body` once a turn at `endpoint` is free, and frees it after.
    func take<R>(
        _ endpoint: ServerAPIEndpoint, _ body: () async throws(ServerError) -> R
    ) async throws(ServerError) -> R {
        await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in
            let now = queues.withLock { queues in
                guard queues[endpoint, default: Queue()].running < limit else {
                    queues[endpoint, default: Queue()].waiting.append(turn)
                    return false
                }
                queues[endpoint, default: Queue()].running += 1
                return true
            }
            if now { turn.resume() }
        }
        defer {
            let next = queues.withLock { queues -> CheckedContinuation<Void, Never>? in
                guard !queues[endpoint, default: Queue()].waiting.isEmpty else {
                    queues[endpoint, default: Queue()].running -= 1
                    return nil
                }
                return queues[endpoint, default: Queue()].waiting.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }
}
