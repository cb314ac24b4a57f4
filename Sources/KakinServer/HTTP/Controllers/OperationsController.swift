import Crypto
import Foundation
import KakinLedger
import HTTPTypes
import Hummingbird
import KakinHTTP
import KakinWire
import Logging

/// The routes an operator, a load balancer or a client needs beside the API itself: liveness and
/// readiness, Prometheus metrics, the server key that signs customer answers, and the OpenAPI
/// document. None takes an app's key; `/metrics` takes the metrics token when one is configured
/// (``OperationsConfiguration``), and is not served here when it has a listener of its own.
struct OperationsController: RouteController {
    let service: PurchaseService
    let metrics: ServerMetrics
    /// The public half of the key that signs customer answers.
    let serverKey: P256.Signing.PublicKey
    /// Who may read `/metrics`, and where.
    var operations = OperationsConfiguration()
    /// Where `/ready` logs what made the server not ready.
    var logger = KakinServerHTTP.quietLogger

    /// What `/ready` answers when the ledger does not answer; the driver's error goes to the log only.
    static let ledgerUnreachable = ServerError(
        .storageUnavailable, "the ledger is not reachable", cause: "ledgerUnreachable")
    /// What `/ready` answers for a while after the ledger refused a write for a full disk. Its cause
    /// is not the ledger's own `diskFull`: this answer is not a refused write, and is not counted as one.
    static let ledgerDiskFull = ServerError(
        .storageUnavailable, "the ledger's disk is full", cause: "ledgerDiskFull")

    func addRoutes(to routes: inout RouteTable) {
        routes.get("health") { _, _ in
            Self.text("ok\n", contentType: "text/plain")
        }
        routes.get("ready") { _, _ in
            // A status and a code only: the database's own words (hosts, users, paths) are for the log.
            do { try await service.pingLedger() } catch {
                logger.warning("not ready: the ledger does not answer", metadata: ["error": "\(error)"])
                throw Self.ledgerUnreachable
            }
            if let since = metrics.recentDiskFull {
                logger.warning(
                    "not ready: the ledger's disk is full",
                    metadata: ["refused_write_seconds_ago": "\(since.components.seconds)"])
                throw Self.ledgerDiskFull
            }
            return Self.text("ready\n", contentType: "text/plain")
        }
        if operations.metricsListen == nil {
            routes.get("metrics") { _, _ in Self.metricsText(metrics) }
        }
        routes.on(.serverKey) { _, _ in
            Self.text(serverKey.pemRepresentation + "\n", contentType: "application/x-pem-file")
        }
        routes.get("openapi.yaml") { _, _ in
            guard let yaml = OpenAPIDocument.yaml else {
                throw ServerError(.notConfigured, "the OpenAPI document is not installed beside the kakin binary")
            }
            return Self.text(yaml, contentType: "application/yaml")
        }
    }

    /// Puts in front of the key middleware what guards `/metrics` on the main listener: the token,
    /// a 404 when `/metrics` has a listener of its own, or, without either, requests made on this
    /// machine only. Nothing is added when `/metrics` is open to every peer.
    static func guardMetrics(on router: Router<KakinRequestContext>, _ operations: OperationsConfiguration) {
        guard !operations.metricsOpenToAnyone else { return }
        router.add(
            middleware: MetricsGuardMiddleware(
                token: operations.metricsToken, servedHere: operations.metricsListen == nil,
                localOnly: operations.metricsToken == nil))
    }

    static func metricsText(_ metrics: ServerMetrics) -> Response {
        text(metrics.render(), contentType: "text/plain; version=0.0.4")
    }

    private static func text(_ text: String, contentType: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: contentType], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// Guards `/metrics` before the key middleware sees the request, so that a metrics token is never
/// taken for a wrong app key (which would count against the scraper's address):
/// - where `/metrics` is not served (`servedHere` false), it answers 404;
/// - with a `token`, it answers 401 unless the request carries `Authorization: Bearer <token>`
///   (compared in constant time), and passes the request on without that header;
/// - with `localOnly`, it answers 401 unless the request was made on this machine: a loopback peer
///   (or none, in process) and no proxy's `X-Forwarded-For` or `Forwarded` naming a client.
///
/// Every other path goes through untouched; the check is one comparison of the path.
struct MetricsGuardMiddleware: RouterMiddleware {
    typealias Context = KakinRequestContext
    let token: String?
    let servedHere: Bool
    var localOnly = false

    @concurrent func handle(
        _ request: Request, context: KakinRequestContext,
        next: @concurrent (Request, KakinRequestContext) async throws -> Response
    ) async throws -> Response {
        guard Self.isMetrics(request.uri.path) else { return try await next(request, context) }
        guard servedHere else { throw ServerError(.notFound, "no route for \(request.uri.path)") }
        if localOnly {
            let proxied =
                request.headers[Self.forwardedFor] != nil || request.headers[Self.forwarded] != nil
            guard context.remoteAddress == nil || PeerAddress.isLoopback(context.remoteAddress), !proxied else {
                throw ServerError(
                    .unauthorized,
                    "/metrics answers requests made on this machine only; configure operations.metricsToken or operations.metricsListen to scrape it from elsewhere")
            }
        }
        guard let token else { return try await next(request, context) }
        let presented = request.headers[.authorization].flatMap {
            $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil
        }
        guard let presented, KakinServerHTTP.constantTimeEquals(presented, token) else {
            throw ServerError(.unauthorized, "/metrics needs the metrics token (Authorization: Bearer …)")
        }
        var head = request.head
        head.headerFields[.authorization] = nil
        return try await next(Request(head: head, body: request.body), context)
    }

    private static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    private static let forwarded = HTTPField.Name("Forwarded")!

    /// Whether `path` is the one the router answers as `/metrics` (it ignores empty components).
    static func isMetrics(_ path: String) -> Bool {
        path.utf8.count < 32 && path.split(separator: "/") == ["metrics"]
    }
}

extension KakinServerHTTP {
    /// The router of the listener of `/metrics` alone (``OperationsConfiguration/metricsListen``):
    /// `GET /metrics`, behind the metrics token when one is configured, with the same request log
    /// and error answers as the main listener; every other path answers 404.
    public func metricsRouter() -> Router<KakinRequestContext> {
        let router = Router(context: KakinRequestContext.self)
        router.add(middleware: RequestObservationMiddleware<KakinRequestContext>(metrics: metrics, logger: logger))
        router.add(middleware: ErrorMiddleware<KakinRequestContext>(metrics: metrics, logger: logger))
        router.add(middleware: MetricsGuardMiddleware(token: operations.metricsToken, servedHere: true))
        var routes = RouteTable(router: router)
        let metrics = self.metrics
        routes.get("metrics") { _, _ in OperationsController.metricsText(metrics) }
        routes.addMethodNotAllowed()
        return router
    }
}

/// `POST /v1/admin/reconcile?bundleId=` (secret key): starts reconciling one app with Apple and
/// answers 202 with the run; `GET /v1/admin/reconcile/runs/{id}` follows it.
struct AdminController: RouteController {
    let service: PurchaseService
    let reconciliations: ReconciliationRunner?

    func addRoutes(to routes: inout RouteTable) {
        routes.post("v1/admin/reconcile") { request, context in
            let caller = try context.caller(secret: true)
            let app = try caller.app(try RequestReader.bundleID(request), in: service)
            guard let reconciliations else {
                throw ServerError(.notConfigured, "reconciliation is not configured on this server")
            }
            let run = try await reconciliations.start(bundleID: app.bundleID)
            return JSONBody.response(
                run, status: .accepted, headers: [.location: "/v1/admin/reconcile/runs/\(run.id)"])
        }
        routes.get("v1/admin/reconcile/runs/:id") { _, context in
            let caller = try context.caller(secret: true)
            let text = try RequestReader.pathParameter(context, "id")
            guard let id = Int64(text), id > 0 else {
                throw ServerError(.invalidRequest, "a run's ID is a positive integer, not '\(text)'")
            }
            // A run of an app the key does not open is answered as unknown.
            guard let run = try await service.reconciliationRun(id: id), caller.bundleIDs.contains(run.bundleID)
            else { throw ServerError(.notFound, "no reconciliation run \(id) of this key's apps") }
            return JSONBody.response(run)
        }
    }
}
