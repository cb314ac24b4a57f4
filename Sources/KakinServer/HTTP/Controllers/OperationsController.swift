import Crypto
import Foundation
import KakinLedger
import Hummingbird
import KakinHTTP
import KakinWire

/// The routes an operator, a load balancer or a client needs beside the API itself: liveness and
/// readiness, Prometheus metrics, the server key that signs customer answers, and the OpenAPI
/// document. None takes a key.
struct OperationsController: RouteController {
    let service: PurchaseService
    let metrics: ServerMetrics
    /// The public half of the key that signs customer answers.
    let serverKey: P256.Signing.PublicKey

    func addRoutes(to routes: inout RouteTable) {
        routes.get("health") { _, _ in
            Self.text("ok\n", contentType: "text/plain")
        }
        routes.get("ready") { _, _ in
            do { try await service.pingLedger() } catch {
                throw ServerError(.storageUnavailable, "the database is not reachable: \(error)")
            }
            if let since = metrics.recentDiskFull {
                // No cause: this answer is not a refused write, and is not counted as one.
                throw ServerError(
                    .storageUnavailable, "the ledger's disk is full: a write was refused \(since.components.seconds) s ago")
            }
            return Self.text("ready\n", contentType: "text/plain")
        }
        routes.get("metrics") { _, _ in
            Self.text(metrics.render(), contentType: "text/plain; version=0.0.4")
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

    private static func text(_ text: String, contentType: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: contentType], body: .init(byteBuffer: ByteBuffer(string: text)))
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
            guard let run = try await service.store.reconciliationRun(id: id), caller.bundleIDs.contains(run.bundleID)
            else { throw ServerError(.notFound, "no reconciliation run \(id) of this key's apps") }
            return JSONBody.response(run)
        }
    }
}
