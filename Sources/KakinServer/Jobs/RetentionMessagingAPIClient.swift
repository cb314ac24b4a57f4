public import AppStoreModels
import AppStoreSecurity
public import Foundation

/// Requests to Apple's Retention Messaging API for one app: messages, images, default messages,
/// the real-time URL of the app's `Get Retention Message` endpoint, and the performance test that
/// must pass before a production URL is accepted.
///
/// The API lives on the App Store Server API's hosts, under `/inApps/v1/messaging`, and is called
/// like it: a fresh bearer token per request (the same in-app purchase key, ``ServerAPIAccess``),
/// the host of the environment asked for, at most
/// ``ServerAPIAccess/concurrentRequestsPerEndpoint`` requests to one endpoint at once, and a 429
/// sent again after Apple's `Retry-After` (or 1, 2, 4… seconds) up to ``attempts`` times within
/// ``longestWait``. Apple's limits are low (one request a second for most endpoints, a tenth of that
/// in the sandbox environment; see `ServerAPIEndpoint/productionRequestsPerSecond`).
///
/// Every refusal is a ``ServerError`` whose ``ServerError/appleStatus`` is Apple's error code
/// (`APIErrorCode`: `APIErrorCode/messageNotFound`, `APIErrorCode/imageInUse`…) and whose code
/// follows the HTTP status: 400 `invalidRequest`, 401 `invalidConfiguration` (a bad key), 403
/// `forbidden`, 404 `notFound`, 409 `conflict` (an identifier uploaded already), 429 and 5xx the
/// retryable `appleUnavailable`.
public struct RetentionMessagingAPIClient: Sendable {
    private var api: AppStoreServerAPIClient

    /// A client for `bundleID`'s messages, reaching Apple with `access` over `exchange`; `now` reads
    /// `Retry-After` (the service's clock).
    public init(
        access: ServerAPIAccess, exchange: any HTTPExchange, bundleID: String,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        api = AppStoreServerAPIClient(access: access, exchange: exchange, bundleID: bundleID, now: now)
    }

    /// How many times a request is sent in all when Apple answers 429.
    public var attempts: Int {
        get { api.attempts }
        set { api.attempts = newValue }
    }
    /// The longest a request waits for Apple's rate limit, in all.
    public var longestWait: Duration {
        get { api.longestWait }
        set { api.longestWait = newValue }
    }
    /// Waits before a request is sent again; tests record the waits instead of sleeping.
    public var pause: @Sendable (Duration) async throws -> Void {
        get { api.pause }
        set { api.pause = newValue }
    }

    // MARK: - Images

    /// Upload Image: `png` under `imageIdentifier` (a UUID the app chooses), for a message or a
    /// bullet point (`size`). Apple refuses an identifier in use with `APIErrorCode/imageAlreadyExists`
    /// and a file it cannot use with `APIErrorCode/invalidImage`; an upload is pending review until
    /// Get Image List says otherwise.
    public func uploadImage(
        _ imageIdentifier: UUID, png: Data, size: RetentionImageSize? = nil, environment: AppStoreEnvironment
    ) async throws(ServerError) {
        let query = size.map { [URLQueryItem(name: "imageSize", value: $0.rawValue)] } ?? []
        try await expectSuccess(
            "PUT", .uploadImage, path: "inApps/v1/messaging/image/\(Self.text(imageIdentifier))", query: query,
            environment: environment, body: png, contentType: "image/png")
    }

    /// Get Image List: every image the app uploaded, with its review state.
    public func imageList(environment: AppStoreEnvironment) async throws(ServerError) -> GetImageListResponse {
        try await get(GetImageListResponse.self, .getImageList, path: "inApps/v1/messaging/image/list", environment)
    }

    /// Delete Image; Apple refuses with `APIErrorCode/imageInUse` while a message shows it.
    public func deleteImage(_ imageIdentifier: UUID, environment: AppStoreEnvironment) async throws(ServerError) {
        try await expectSuccess(
            "DELETE", .deleteImage, path: "inApps/v1/messaging/image/\(Self.text(imageIdentifier))",
            environment: environment)
    }

    // MARK: - Messages

    /// Upload Message: `message` under `messageIdentifier` (a UUID the app chooses). Not idempotent:
    /// an identifier in use is refused with `APIErrorCode/messageAlreadyExists`.
    public func uploadMessage(
        _ messageIdentifier: UUID, _ message: UploadMessageRequestBody, environment: AppStoreEnvironment
    ) async throws(ServerError) {
        try await expectSuccess(
            "PUT", .uploadMessage, path: "inApps/v1/messaging/message/\(Self.text(messageIdentifier))",
            environment: environment, json: message)
    }

    /// Get Message List: every message the app uploaded, with its review state.
    public func messageList(environment: AppStoreEnvironment) async throws(ServerError) -> GetMessageListResponse {
        try await get(
            GetMessageListResponse.self, .getMessageList, path: "inApps/v1/messaging/message/list", environment)
    }

    /// Delete Message.
    public func deleteMessage(_ messageIdentifier: UUID, environment: AppStoreEnvironment) async throws(ServerError) {
        try await expectSuccess(
            "DELETE", .deleteMessage, path: "inApps/v1/messaging/message/\(Self.text(messageIdentifier))",
            environment: environment)
    }

    // MARK: - Default messages

    /// Configure Default Message: the approved message shown for `productID` in `locale` when the
    /// real-time endpoint does not answer in time (or the app has none).
    public func configureDefaultMessage(
        productID: String, locale: String, messageIdentifier: UUID, environment: AppStoreEnvironment
    ) async throws(ServerError) {
        try await expectSuccess(
            "PUT", .configureDefaultMessage, path: Self.defaultPath(productID, locale), environment: environment,
            json: DefaultConfigurationRequest(messageIdentifier: Self.text(messageIdentifier)))
    }

    /// Get Default Message for `productID` in `locale`; `APIErrorCode/defaultMessageNotFound` when
    /// none is configured.
    public func defaultMessage(
        productID: String, locale: String, environment: AppStoreEnvironment
    ) async throws(ServerError) -> DefaultConfigurationResponse {
        try await get(
            DefaultConfigurationResponse.self, .getDefaultMessage, path: Self.defaultPath(productID, locale),
            environment)
    }

    /// Delete Default Message for `productID` in `locale`.
    public func deleteDefaultMessage(
        productID: String, locale: String, environment: AppStoreEnvironment
    ) async throws(ServerError) {
        try await expectSuccess(
            "DELETE", .deleteDefaultMessage, path: Self.defaultPath(productID, locale), environment: environment)
    }

    // MARK: - Real-time URL

    /// Configure Realtime URL: where the App Store of `environment` sends `Get Retention Message`
    /// requests. Production refuses with `APIErrorCode/noPassingPerformanceTest` until a
    /// performance test passed.
    public func configureRealtimeURL(_ url: URL, environment: AppStoreEnvironment) async throws(ServerError) {
        try await expectSuccess(
            "PUT", .configureRealtimeURL, path: Self.realtimePath, environment: environment,
            json: RealtimeURLRequest(realtimeURL: url.absoluteString))
    }

    /// Get Realtime URL of `environment`; `APIErrorCode/realtimeURLNotFound` when none is set.
    public func realtimeURL(environment: AppStoreEnvironment) async throws(ServerError) -> RealtimeURLResponse {
        try await get(RealtimeURLResponse.self, .getRealtimeURL, path: Self.realtimePath, environment)
    }

    /// Delete Realtime URL of `environment`.
    public func deleteRealtimeURL(environment: AppStoreEnvironment) async throws(ServerError) {
        try await expectSuccess("DELETE", .deleteRealtimeURL, path: Self.realtimePath, environment: environment)
    }

    // MARK: - Performance test

    /// Initiate Performance Test, in the sandbox environment (the only one that runs it), with
    /// requests for `originalTransactionID`'s subscription; the answer says how the test runs and
    /// the ID to read its result with.
    public func initiatePerformanceTest(
        originalTransactionID: String
    ) async throws(ServerError) -> PerformanceTestResponse {
        let body = try Self.encode(PerformanceTestRequest(originalTransactionID: originalTransactionID))
        let (status, answer) = try await api.send(
            "POST", .initiatePerformanceTest, path: "inApps/v1/messaging/performanceTest", environment: .sandbox,
            body: body, contentType: "application/json")
        guard status == 200 else { throw Self.failure(status: status, body: answer) }
        return try AppStoreServerAPIClient.decode(PerformanceTestResponse.self, from: answer)
    }

    /// Get Performance Test Results for `requestID`: `PENDING` while it runs, then `PASS` or
    /// `FAIL` with the success rate, the response times and the failures by reason.
    public func performanceTestResult(requestID: String) async throws(ServerError) -> PerformanceTestResultResponse {
        try await get(
            PerformanceTestResultResponse.self, .getPerformanceTestResults,
            path: "inApps/v1/messaging/performanceTest/result/\(requestID)", .sandbox)
    }

    // MARK: - Requests

    private static let realtimePath = "inApps/v1/messaging/realtime/url"

    private static func defaultPath(_ productID: String, _ locale: String) -> String {
        "inApps/v1/messaging/default/\(productID)/\(locale)"
    }

    /// A UUID as Apple writes identifiers: lowercase.
    private static func text(_ identifier: UUID) -> String { identifier.uuidString.lowercased() }

    private func get<Response: Decodable>(
        _ type: Response.Type, _ endpoint: ServerAPIEndpoint, path: String, _ environment: AppStoreEnvironment
    ) async throws(ServerError) -> Response {
        let (status, answer) = try await api.send(
            "GET", endpoint, path: path, environment: environment, body: nil, contentType: nil)
        guard status == 200 else { throw Self.failure(status: status, body: answer) }
        return try AppStoreServerAPIClient.decode(Response.self, from: answer)
    }

    private func expectSuccess(
        _ method: String, _ endpoint: ServerAPIEndpoint, path: String, query: [URLQueryItem] = [],
        environment: AppStoreEnvironment, json: (any Encodable)? = nil
    ) async throws(ServerError) {
        try await expectSuccess(
            method, endpoint, path: path, query: query, environment: environment,
            body: try json.map { value throws(ServerError) in try Self.encode(value) },
            contentType: json == nil ? nil : "application/json")
    }

    private func expectSuccess(
        _ method: String, _ endpoint: ServerAPIEndpoint, path: String, query: [URLQueryItem] = [],
        environment: AppStoreEnvironment, body: Data?, contentType: String?
    ) async throws(ServerError) {
        let (status, answer) = try await api.send(
            method, endpoint, path: path, query: query, environment: environment, body: body,
            contentType: contentType)
        guard (200...204).contains(status) else { throw Self.failure(status: status, body: answer) }
    }

    private static func encode(_ value: some Encodable) throws(ServerError) -> Data {
        do { return try JSONEncoder().encode(value) } catch {
            throw ServerError(.internalError, "the request body cannot be encoded: \(error)")
        }
    }

    /// Apple's refusal as a server error: the code follows the HTTP status, Apple's error code is
    /// kept as ``ServerError/appleStatus``.
    static func failure(status: Int, body: Data) -> ServerError {
        let apiError = try? JSONDecoder().decode(APIErrorResponse.self, from: body)
        let code: ServerError.Code =
            switch status {
            case 429, 500...: .appleUnavailable
            case 401: .invalidConfiguration
            case 400: .invalidRequest
            case 403: .forbidden
            case 404: .notFound
            case 409: .conflict
            default: .internalError
            }
        return ServerError(
            code,
            "the Retention Messaging API answered \(status) \(apiError?.errorCode?.rawValue ?? 0): "
                + (apiError?.errorMessage ?? ""),
            appleStatus: apiError?.errorCode?.rawValue)
    }
}
