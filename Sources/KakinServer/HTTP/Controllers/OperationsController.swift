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

/// `POST /v1/admin/reconcile?bundleId=` (secret key): reconciles one app with Apple now.
struct AdminController: RouteController {
    let service: PurchaseService
    let reconciler: Reconciler?

    func addRoutes(to routes: inout RouteTable) {
        routes.post("v1/admin/reconcile") { request, context in
            let caller = try context.caller(secret: true)
            let app = try caller.app(try RequestReader.bundleID(request), in: service)
            guard let reconciler else {
                throw ServerError(.notConfigured, "reconciliation is not configured on this server")
            }
            return JSONBody.response(try await reconciler.reconcile(bundleID: app.bundleID))
        }
    }
}
