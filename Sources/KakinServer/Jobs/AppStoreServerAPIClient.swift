public import AppStoreModels
import AppStoreSecurity
public import Foundation

/// GET requests to the App Store Server API for one app: a fresh bearer token per request, the
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
        let token: String
        do {
            token = try AppStoreServerAPIToken.make(
                keyID: access.keyID, issuerID: access.issuerID, bundleID: bundleID, privateKey: access.privateKey)
        } catch {
            throw ServerError(.invalidConfiguration, "the App Store Server API token cannot be made: \(error)")
        }
        let (status, body): (Int, Data)
        do {
            (status, body) = try await exchange.send(
                method: "GET", url: url, headers: ["Authorization": "Bearer \(token)", "Accept": "application/json"],
                body: nil)
        } catch {
            throw ServerError(.appleUnavailable, "the App Store Server API did not answer: \(error)")
        }
        guard status == 200 else {
            let apiError = try? JSONDecoder().decode(APIErrorResponse.self, from: body)
            if missingIsNil, status == 404 || apiError?.errorCode == .transactionIDNotFound { return nil }
            throw ServerError(
                status == 429 || status >= 500
                    ? .appleUnavailable : status == 401 ? .invalidConfiguration : .internalError,
                "the App Store Server API answered \(status) \(apiError?.errorCode?.rawValue ?? 0): \(apiError?.errorMessage ?? "")"
            )
        }
        do { return try JSONDecoder().decode(Response.self, from: body) } catch {
            throw ServerError(.appleUnavailable, "the App Store Server API answered an unreadable \(Response.self)")
        }
    }
}
