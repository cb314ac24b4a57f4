import Foundation
import KakinLedger
import HTTPTypes
import Hummingbird
import KakinWire
import Logging

/// A group of the server's routes, registered together: each controller owns one area of the
/// API (purchases, customers, content, …) and the values its handlers need.
protocol RouteController: Sendable {
    /// Registers the controller's routes.
    func addRoutes(to routes: inout RouteTable)
}

/// Registers the server's routes on its router and remembers which methods each path takes, so
/// that a known path asked with another method answers 405 with `Allow` instead of 404. What a
/// handler throws is rendered by ``ErrorMiddleware``.
struct RouteTable {
    typealias Handler = @Sendable (Request, KakinRequestContext) async throws -> Response

    /// The router the routes are added to.
    let router: Router<KakinRequestContext>
    /// Methods by path, in the order the paths were added.
    private(set) var methods: [(path: String, methods: [HTTPRequest.Method])] = []

    init(router: Router<KakinRequestContext>) {
        self.router = router
    }

    /// Registers `controller`'s routes.
    mutating func add(_ controller: some RouteController) {
        controller.addRoutes(to: &self)
    }

    mutating func on(_ path: String, _ method: HTTPRequest.Method, _ handler: @escaping Handler) {
        if let index = methods.firstIndex(where: { $0.path == path }) {
            methods[index].methods.append(method)
        } else {
            methods.append((path, [method]))
        }
        router.on(RouterPath(path), method: method, use: handler)
    }

    mutating func get(_ path: String, _ handler: @escaping Handler) {
        on(path, .get, handler)
    }

    mutating func post(_ path: String, _ handler: @escaping Handler) {
        on(path, .post, handler)
    }

    /// Registers a route of the shared API contract (its pattern and method come from the contract).
    mutating func on(_ route: KakinRoute, _ handler: @escaping Handler) {
        on(route.pattern, HTTPRequest.Method(route.method)!, handler)
    }

    /// Answers 405 for every common method a known path does not take.
    func addMethodNotAllowed() {
        let common: [HTTPRequest.Method] = [.get, .post, .put, .delete, .patch]
        for (path, taken) in methods {
            let allow = taken.map(\.rawValue).joined(separator: ", ")
            for method in common where !taken.contains(method) {
                router.on(RouterPath(path), method: method) { request, _ -> Response in
                    ServerError(.methodNotAllowed, "\(request.method.rawValue) is not allowed here; use \(allow)")
                        .response(allow: allow)
                }
            }
        }
    }
}

/// Renders every failure of a route as the typed error answer
/// (`{"error": {"code", "message", "retryable", …}}` with its status): whatever a handler or a
/// later middleware throws becomes a ``ServerError``. A verification failure is counted by its
/// cause, a write refused for a full disk is counted (and reported by `/ready` for a while); an
/// internal error is logged with its route.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics
    let logger: Logger

    @concurrent func handle(
        _ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response
    ) async throws -> Response {
        do { return try await next(request, context) } catch {
            let failure = ServerError(error)
            if failure.code == .verificationFailed {
                metrics.verificationFailure(cause: failure.cause ?? "unknown")
            }
            if failure.ledgerCode == .diskFull { metrics.ledgerDiskFull() }
            if failure.code == .internalError {
                logger.error(
                    "internal error", metadata: ["error": "\(error)", "route": "\(context.endpointPath ?? "unmatched")"])
            }
            return failure.response(allow: nil)
        }
    }
}

/// One structured log line and the latency metrics for every request: request ID, method,
/// route (the matched path pattern, never the customer's ID), status and latency.
struct RequestObservationMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics
    let logger: Logger

    @concurrent func handle(
        _ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response
    ) async throws -> Response {
        let clock = ContinuousClock()
        let start = clock.now
        let requestID = context.logger[metadataKey: "hb.request.id"].map { "\($0)" } ?? UUID().uuidString
        let status: Int
        let response: Response
        do {
            response = try await next(request, context)
            status = response.status.code
        } catch {
            let code = (error as? any HTTPResponseError)?.status.code ?? 500
            observe(request, context, requestID: requestID, status: code, elapsed: clock.now - start)
            throw error
        }
        observe(request, context, requestID: requestID, status: status, elapsed: clock.now - start)
        var answered = response
        answered.headers[HTTPField.Name("X-Request-Id")!] = requestID
        return answered
    }

    private func observe(
        _ request: Request, _ context: Context, requestID: String, status: Int, elapsed: Duration
    ) {
        let route = context.endpointPath ?? "unmatched"
        metrics.request(route: route, method: request.method.rawValue, status: status, duration: elapsed)
        logger.info(
            "request",
            metadata: [
                "request_id": "\(requestID)", "method": "\(request.method.rawValue)", "route": "\(route)",
                "status": "\(status)", "latency_ms": "\(Self.milliseconds(elapsed))",
            ])
    }

    /// `elapsed` in milliseconds with three decimals (`12.345`).
    static func milliseconds(_ elapsed: Duration) -> String {
        let (seconds, attoseconds) = elapsed.components
        let micros = max(seconds * 1_000_000 + attoseconds / 1_000_000_000_000, 0)
        let fraction = String(micros % 1000)
        return "\(micros / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
