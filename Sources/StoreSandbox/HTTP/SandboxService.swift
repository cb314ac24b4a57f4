import AppStoreModels
public import AppStoreSecurity
import Foundation
public import Hummingbird
import KakinHTTP

/// The sandbox as an HTTP service: the device API the SDK uses, the control API for tests,
/// Apple's own APIs (`verifyReceipt`, and the App Store Server API), and the OCSP responder its
/// certificates name (`/ocsp`), on the same port.
public struct SandboxService: Sendable {
    /// Settings of the service.
    public struct Configuration: Sendable {
        /// The app's shared secret for `verifyReceipt`; `nil` accepts any `password`.
        public var sharedSecret: String?
        /// Keys accepted for App Store Server API bearer tokens.
        public var apiKeys: [AppStoreServerAPITokenVerifier.Key]
        /// The App Store Server API's request limits (``SandboxRateLimits/apple`` for Apple's);
        /// `nil` for none.
        public var rateLimits: SandboxRateLimits?

        /// Creates settings from their parts; by default any `verifyReceipt` password is accepted,
        /// no App Store Server API token (no key is registered), and no request limit.
        public init(
            sharedSecret: String? = nil, apiKeys: [AppStoreServerAPITokenVerifier.Key] = [],
            rateLimits: SandboxRateLimits? = nil
        ) {
            self.sharedSecret = sharedSecret
            self.apiKeys = apiKeys
            self.rateLimits = rateLimits
        }
    }

    /// The purchase engine.
    public let engine: SandboxEngine
    /// The catalog the engine sells from.
    public let catalog: SandboxCatalog
    /// The service's settings.
    public let configuration: Configuration
    /// The hosted content packages.
    public let content: HostedContentStore
    /// Apple's side of Retention Messaging: uploads, cancel-page requests, performance tests.
    public let retention: SandboxRetention
    /// Checks App Store Server API bearer tokens against ``Configuration/apiKeys``; made once.
    let tokenVerifier: AppStoreServerAPITokenVerifier
    /// Counts the App Store Server API's requests against ``Configuration/rateLimits``.
    let rateLimiter: SandboxRateLimiter?

    /// Creates the service; `retention` is made for `engine` (sending real-time requests with
    /// `URLSession`) when not given. Nothing listens until its ``application(host:port:access:)``
    /// runs, or its ``router(access:)`` is served.
    public init(
        engine: SandboxEngine, catalog: SandboxCatalog, configuration: Configuration = Configuration(),
        content: HostedContentStore = HostedContentStore(), retention: SandboxRetention? = nil
    ) {
        self.engine = engine
        self.retention = retention ?? SandboxRetention(engine: engine)
        self.catalog = catalog
        self.configuration = configuration
        self.content = content
        tokenVerifier = AppStoreServerAPITokenVerifier(keys: configuration.apiKeys)
        rateLimiter = configuration.rateLimits.map(SandboxRateLimiter.init)
    }

    /// All routes. With an `access` policy other than ``SandboxAccessPolicy/everyone``, the device
    /// and control APIs answer only the peers it lets in (see ``SandboxAccessPolicy``).
    public func router(access: SandboxAccessPolicy = .everyone) -> Router<SandboxRequestContext> {
        let router = Router(context: SandboxRequestContext.self)
        if access.rule != .everyone { router.add(middleware: SandboxAccessMiddleware(policy: access)) }
        router.get("health") { _, _ in "ok" }
        addDeviceRoutes(to: router)
        addControlRoutes(to: router)
        addVerifyReceiptRoutes(to: router)
        addServerAPIRoutes(to: router)
        addNotificationAPIRoutes(to: router)
        addExtensionAPIRoutes(to: router)
        addRetentionAPIRoutes(to: router)
        addOCSPRoutes(to: router)
        return router
    }

    /// An application listening on `host`:`port` (port 0 picks a free one), its device and control
    /// APIs guarded by `access`.
    public func application(
        host: String = "127.0.0.1", port: Int = 0, access: SandboxAccessPolicy = .everyone
    ) -> some ApplicationProtocol {
        Application(router: router(access: access), configuration: .init(address: .hostname(host, port: port)))
    }
}

/// The error body of the device and control APIs: `{"error": {"code": …, "message": …}}`, with
/// `storeKitCode` (the `SKError.Code` number) when the failure is one StoreKit reports.
struct ServiceErrorBody: Codable, Sendable {
    struct Detail: Codable, Sendable {
        var code: String
        var message: String
        var storeKitCode: Int?
    }
    var error: Detail
}

/// Encoding shared by every route: JSON, sorted keys, dates as epoch milliseconds like Apple's.
enum ServiceJSON {
    static func response<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) -> Response {
        JSONBody.response(value, status: status)
    }

    static func error(
        _ status: HTTPResponse.Status, code: String, message: String, storeKitCode: StoreKitErrorCode? = nil
    ) -> Response {
        response(
            ServiceErrorBody(error: .init(code: code, message: message, storeKitCode: storeKitCode?.rawValue)),
            status: status)
    }

    /// A simulated network failure answers 503, as an unreachable store would; every other
    /// simulated StoreKit error, and every client mistake, 4xx.
    static func error(_ error: SandboxError) -> Response {
        let status: HTTPResponse.Status =
            switch error.code {
            case .unknownTester, .unknownTransaction, .unknownPendingPurchase, .unknownProduct, .unknownStorefront,
                .unknownOfferCode:
                .notFound
            case .stateUnavailable: .internalServerError
            case .simulatedError where error.storeKitCode == .cloudServiceNetworkConnectionFailed: .serviceUnavailable
            default: .badRequest
            }
        return self.error(status, code: "\(error.code)", message: error.message, storeKitCode: error.storeKitCode)
    }

    /// Reads a JSON body of at most 1 MiB.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws(RouteFailure) -> T {
        let buffer: ByteBuffer
        do { buffer = try await request.body.collect(upTo: 1 << 20) } catch {
            throw RouteFailure(
                self.error(.contentTooLarge, code: "invalidRequest", message: "the body is larger than 1 MiB"))
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        do { return try decoder.decode(T.self, from: Data(buffer: buffer)) } catch {
            throw RouteFailure(
                self.error(.badRequest, code: "invalidRequest", message: "the body is not a valid \(T.self): \(error)"))
        }
    }
}

/// A route that ends early with a ready response (a 4xx with its error body).
struct RouteFailure: Error {
    let response: Response
    init(_ response: Response) { self.response = response }
}

/// Runs a route body, turning typed failures into their error responses.
func respond(_ body: () async throws -> Response) async -> Response {
    do { return try await body() } catch let failure as RouteFailure {
        return failure.response
    } catch let error as SandboxError {
        return ServiceJSON.error(error)
    } catch {
        return ServiceJSON.error(.internalServerError, code: "internal", message: "\(error)")
    }
}
