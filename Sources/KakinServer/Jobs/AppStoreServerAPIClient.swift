public import AppStoreModels
import AppStoreSecurity
public import Foundation
public import KakinLedger

/// Requests to the App Store Server API for one app: a fresh bearer token per request, the
/// host of the data's environment, and Apple's error bodies read into a ``ServerError``
/// (a 429 or 5xx, or no answer at all, is the retryable `appleUnavailable`; a 401 is a bad key).
struct AppStoreServerAPIClient: Sendable {
    let access: ServerAPIAccess
    let exchange: any HTTPExchange
    let bundleID: String

    /// Apple's answer to `GET <host>/<path>?<query>`, decoded as `Response`; `nil` for a 404 or
    /// an unknown transaction ID, when `missingIsNil` is set.
    func get<Response: Decodable>(
        _ type: Response.Type, path: String, query: [URLQueryItem] = [], environment: AppStoreEnvironment
    ) async throws(ServerError) -> Response {
        guard let answer = try await get(type, path: path, query: query, environment: environment, missingIsNil: false)
        else {
            throw ServerError(.notFound, "the App Store Server API knows no \(path)")
        }
        return answer
    }

    /// `PUT <host>/<path>` with `body` as JSON; returns when Apple answers 200 or 202. Apple's
    /// refusals are thrown as for a GET, with Apple's error code as ``ServerError/appleStatus``.
    func put<Body: Encodable>(_ body: Body, path: String, environment: AppStoreEnvironment) async throws(ServerError) {
        let url = access.baseURL(for: environment).appendingPathComponent(path)
        let data: Data
        do { data = try JSONEncoder().encode(body) } catch {
            throw ServerError(.internalError, "the request body cannot be encoded: \(error)")
        }
        let (status, answer) = try await exchange(
            "PUT", url: url, headers: ["Content-Type": "application/json"], body: data)
        guard status == 200 || status == 202 else { throw Self.failure(status: status, body: answer) }
    }

    /// Sends one request with a fresh bearer token; throws `appleUnavailable` when nothing answered.
    private func exchange(
        _ method: String, url: URL, headers: [String: String], body: Data?
    ) async throws(ServerError) -> (Int, Data) {
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
        do { return try await exchange.send(method: method, url: url, headers: all, body: body) } catch {
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
        _ type: Response.Type, path: String, query: [URLQueryItem] = [], environment: AppStoreEnvironment,
        missingIsNil: Bool
    ) async throws(ServerError) -> Response? {
        var components = URLComponents(
            url: access.baseURL(for: environment).appendingPathComponent(path), resolvingAgainstBaseURL: false)
        if !query.isEmpty { components?.queryItems = query }
        guard let url = components?.url else {
            throw ServerError(.invalidConfiguration, "bad App Store Server API URL")
        }
        let (status, body) = try await exchange("GET", url: url, headers: [:], body: nil)
        guard status == 200 else {
            let apiError = try? JSONDecoder().decode(APIErrorResponse.self, from: body)
            if missingIsNil, status == 404 || apiError?.errorCode == .transactionIDNotFound { return nil }
            throw Self.failure(status: status, body: body)
        }
        do { return try JSONDecoder().decode(Response.self, from: body) } catch {
            throw ServerError(.appleUnavailable, "the App Store Server API answered an unreadable \(Response.self)")
        }
    }
}
