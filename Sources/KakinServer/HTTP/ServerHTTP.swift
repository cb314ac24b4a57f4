import AppStoreModels
import Crypto
import Foundation
import HTTPTypes
public import Hummingbird
import KakinHTTP

/// The purchase server's HTTP API. Every route answers JSON; failures answer
/// `{"error": {"code", "message", "retryable", "appleStatus"?}}` with the status of the error.
public struct KakinServerHTTP: Sendable {
    /// The core.
    public let service: PurchaseService
    /// Signs customer responses so the SDK can detect tampering (header `X-Kakin-Signature`).
    public let signingKey: P256.Signing.PrivateKey
    /// The largest request body accepted (content uploads excepted).
    public let maxBodySize: Int
    /// The largest content package accepted.
    public let maxContentSize: Int
    /// Reconciles on demand (`POST /v1/admin/reconcile`); `nil` when no API access is configured.
    public let reconciler: Reconciler?
    /// The `.storekit` catalog served at `/v1/catalog`.
    public let catalog: StoreKitConfiguration?
    let metrics = ServerMetrics()

    public init(
        service: PurchaseService, signingKey: P256.Signing.PrivateKey, reconciler: Reconciler? = nil,
        catalog: StoreKitConfiguration? = nil, maxBodySize: Int = 256 * 1024, maxContentSize: Int = 512 * 1024 * 1024
    ) {
        self.service = service
        self.reconciler = reconciler
        self.catalog = catalog
        self.signingKey = signingKey
        self.maxBodySize = maxBodySize
        self.maxContentSize = maxContentSize
    }

    /// All routes.
    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("health") { _, _ in Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "ok\n"))) }
        router.get("metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(string: await metrics.render())))
        }
        router.get("v1/server-key") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/x-pem-file"],
                body: .init(byteBuffer: ByteBuffer(string: signingKey.publicKey.pemRepresentation + "\n")))
        }
        router.get("openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml"],
                body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.yaml)))
        }
        addPurchaseRoutes(to: router)
        addCustomerRoutes(to: router)
        addContentRoutes(to: router)
        addCatalogRoute(to: router)
        router.post("v1/admin/reconcile") { request, _ in
            await handle("reconcile") {
                let bundleID = try Self.bundleID(request)
                try authenticate(request, bundleID: bundleID, secret: true)
                guard let reconciler else {
                    throw ServerError(.invalidConfiguration, "no App Store Server API access is configured")
                }
                return Self.json(try await reconciler.reconcile(bundleID: bundleID))
            }
        }
        return router
    }

    /// Runs a route body; typed failures become their JSON error, anything else a 500.
    func handle(_ route: String, _ body: () async throws -> Response) async -> Response {
        let response: Response
        do { response = try await body() } catch let error as ServerError {
            response = Self.error(error)
        } catch {
            response = Self.error(ServerError(.storageUnavailable, "\(error)"))
        }
        await metrics.count(route: route, status: response.status.code)
        return response
    }

    static func error(_ error: ServerError) -> Response {
        struct Body: Encodable {
            struct Detail: Encodable {
                var code: String
                var message: String
                var retryable: Bool
                var appleStatus: Int?
            }
            var error: Detail
        }
        return json(
            Body(
                error: .init(
                    code: "\(error.code)", message: error.message, retryable: error.isRetryable,
                    appleStatus: error.appleStatus)),
            status: HTTPResponse.Status(code: error.httpStatus))
    }

    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response
    {
        JSONBody.response(value, status: status, headers: headers)
    }

    static func encode<T: Encodable>(_ value: T) -> Data { JSONBody.encode(value) }

    /// Reads a JSON body no larger than ``maxBodySize``.
    func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws(ServerError) -> T {
        let buffer: ByteBuffer
        do { buffer = try await request.body.collect(upTo: maxBodySize) } catch {
            throw ServerError(.invalidRequest, "the body is larger than \(maxBodySize) bytes")
        }
        let decoder = JSONDecoder()
        do { return try decoder.decode(T.self, from: Data(buffer: buffer)) } catch {
            throw ServerError(.invalidRequest, "the body is not a valid request: \(error)")
        }
    }

    // MARK: - Keys

    /// Checks the app's publishable key (`X-Kakin-Key`, or `Authorization: Bearer pk_…`), or its
    /// secret key when `secret` is true (`Authorization: Bearer sk_…`).
    func authenticate(_ request: Request, bundleID: String, secret: Bool) throws(ServerError) {
        let app = try service.app(bundleID)
        let bearer = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        let presented = secret ? bearer : (request.headers[HTTPField.Name("X-Kakin-Key")!] ?? bearer)
        let expected = secret ? app.secretKey : app.publicKey
        guard let presented,
            Self.constantTimeEquals(presented, expected)
                || (!secret && Self.constantTimeEquals(presented, app.secretKey))
        else {
            throw ServerError(
                .unauthorized, secret ? "this call needs the app's secret key" : "this call needs the app's key")
        }
    }

    static func constantTimeEquals(_ left: String, _ right: String) -> Bool {
        let a = Array(left.utf8)
        let b = Array(right.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

/// Request counters for `/metrics`, in Prometheus' text format.
actor ServerMetrics {
    private var requests: [String: Int] = [:]

    func count(route: String, status: Int) {
        requests["route=\"\(route)\",status=\"\(status)\"", default: 0] += 1
    }

    func render() -> String {
        var lines = [
            "# HELP kakin_http_requests_total HTTP requests by route and status.",
            "# TYPE kakin_http_requests_total counter",
        ]
        for (labels, count) in requests.sorted(by: { $0.key < $1.key }) {
            lines.append("kakin_http_requests_total{\(labels)} \(count)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
