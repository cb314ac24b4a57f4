import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import Logging
import Prometheus
import Testing

@testable import KakinLedger
@testable import KakinServer

/// The error middleware renders a full disk as a retryable 503 with cause `diskFull`, and counts
/// it by the ledger's code: a refusal that only says `diskFull` in its text is not counted.
@Suite struct ErrorMiddlewareTests {
    static func error(_ response: TestResponse) -> [String: Any] {
        (ServerHTTPTests.object(response.body)["error"] as? [String: Any]) ?? [:]
    }

    /// A router whose routes throw what their path names, behind the server's error middleware.
    static func router(metrics: ServerMetrics) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: ErrorMiddleware(metrics: metrics, logger: KakinServerHTTP.quietLogger))
        let failures: [String: any Error] = [
            "ledger": LedgerStoreError(.diskFull, "SQLite: database or disk is full"),
            "service": ServerError(LedgerStoreError(.diskFull, "SQLite: database or disk is full")),
            "text": ServerError(.storageUnavailable, "SQLite: database or disk is full", cause: "diskFull"),
            "unavailable": LedgerStoreError(.unavailable, "the ledger was shut down"),
            "driver": DatabaseError(resultCode: .SQLITE_FULL, message: "database or disk is full"),
            "other": CancellationError(),
        ]
        for (path, failure) in failures {
            router.get(RouterPath(path)) { _, _ -> Response in throw failure }
        }
        return router
    }

    @Test("a full disk thrown by the ledger or passed on by a service: 503 with cause diskFull, counted")
    func aFullDiskIsRenderedAndCountedByItsCode() async throws {
        let metrics = ServerMetrics(registry: PrometheusCollectorRegistry())
        try await Application(router: Self.router(metrics: metrics)).test(.router) { client in
            for (path, count) in [("ledger", 1), ("service", 2), ("text", 2), ("unavailable", 2)] {
                let response = try await client.execute(uri: "/\(path)", method: .get)
                #expect(response.status == .serviceUnavailable, "\(path)")
                let error = Self.error(response)
                #expect(error["code"] as? String == "storageUnavailable", "\(path)")
                #expect(error["retryable"] as? Bool == true, "\(path)")
                #expect(metrics.render().contains("kakin_ledger_disk_full_total \(count)"), "\(path): \(count) counted")
            }
            let full = try await client.execute(uri: "/ledger", method: .get)
            #expect(Self.error(full)["cause"] as? String == "diskFull")
            #expect(Self.error(full)["message"] as? String == "SQLite: database or disk is full")
        }
    }

    @Test("a driver's error is matched by its type and code: SQLite's full disk is the ledger's, anything else internal")
    func driverErrorsAreMatchedByType() async throws {
        let metrics = ServerMetrics(registry: PrometheusCollectorRegistry())
        try await Application(router: Self.router(metrics: metrics)).test(.router) { client in
            let full = try await client.execute(uri: "/driver", method: .get)
            #expect(full.status == .serviceUnavailable)
            #expect(Self.error(full)["code"] as? String == "storageUnavailable")
            #expect(Self.error(full)["cause"] as? String == "diskFull")
            #expect(metrics.render().contains("kakin_ledger_disk_full_total 1"))
            let other = try await client.execute(uri: "/other", method: .get)
            #expect(other.status == .internalServerError)
            #expect(Self.error(other)["code"] as? String == "internalError")
        }
    }

    @Test("an upload refused for a full disk through the whole route: 503, cause diskFull, counted once")
    func anUploadRefusedForAFullDisk() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-disk-full-\(UUID()).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let fixture = try await ServerFixture(path: path)
        let store = try #require(fixture.store as? SQLiteLedger)
        let metrics = ServerMetrics(registry: PrometheusCollectorRegistry())
        let http = KakinServerHTTP(
            service: fixture.service, signingKey: fixture.serverKey, metrics: metrics,
            logger: KakinServerHTTP.quietLogger)
        try await Application(router: http.router()).test(.router) { client in
            func upload(_ user: String) async throws -> TestResponse {
                let (_, jws) = try await fixture.buy("increasePoints")
                return try await client.execute(
                    uri: "/v1/transactions", method: .post, headers: [HTTPField.Name("X-Kakin-Key")!: "pk_test"],
                    body: ServerHTTPTests.json(
                        ["bundleId": ServerFixture.bundleID, "appUserId": user, "signedTransaction": jws]))
            }
            #expect(try await upload("user-1").status == .ok)
            let pages = try await store.writer.read { try Int.fetchOne($0, sql: "PRAGMA page_count") } ?? 0
            try await store.writer.writeWithoutTransaction { try $0.execute(sql: "PRAGMA max_page_count = \(pages)") }
            var refused: TestResponse?
            for index in 0..<200 where refused == nil {
                let response = try await upload("user-\(index)")
                if response.status != .ok { refused = response }
            }
            let response = try #require(refused, "the page limit was reached")
            #expect(response.status == .serviceUnavailable)
            let error = Self.error(response)
            #expect(error["code"] as? String == "storageUnavailable")
            #expect(error["cause"] as? String == "diskFull")
            #expect(error["retryable"] as? Bool == true)
            #expect(metrics.render().contains("kakin_ledger_disk_full_total 1"))
        }
        try await fixture.store.shutdown()
    }
}
