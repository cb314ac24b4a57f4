import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinLedger
import KakinTestSupport
import Logging
import Synchronization
import Prometheus
import Testing

@testable import KakinServer

/// `/ready` answers a status and a code, never the database's words; `/metrics` answers only
/// what the `operations` settings let in.
@Suite struct OperationsEndpointTests {
    static let token = "metrics-token-0123456789"

    static func error(_ response: TestResponse) -> [String: Any] {
        let object = (try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) as? [String: Any]
        return object?["error"] as? [String: Any] ?? [:]
    }

    static func http(
        _ fixture: ServerFixture, _ operations: OperationsConfiguration, metrics: ServerMetrics = ServerMetrics(),
        logger: Logger = KakinServerHTTP.quietLogger
    ) -> KakinServerHTTP {
        KakinServerHTTP(
            service: fixture.service, signingKey: fixture.serverKey, metrics: metrics, logger: logger,
            operations: operations)
    }

    @Test("an unreachable ledger: 503 with a fixed message and cause; the driver's error goes to the log")
    func readyWithoutTheLedger() async throws {
        let fixture = try await ServerFixture()
        let logs = RecordedLogs()
        let logger = Logger(label: "kakin.test") { _ in RecordedLogHandler(logs: logs) }
        try await Application(router: Self.http(fixture, .init(), logger: logger).router()).test(.router) { client in
            #expect(try await client.execute(uri: "/ready", method: .get).status == .ok)
            try await fixture.store.shutdown()
            var driverText = ""
            do { try await fixture.service.pingLedger() } catch { driverText = "\(error)" }
            #expect(!driverText.isEmpty)

            let ready = try await client.execute(uri: "/ready", method: .get)
            #expect(ready.status == .serviceUnavailable)
            let error = Self.error(ready)
            #expect(error["code"] as? String == "storageUnavailable")
            #expect(error["cause"] as? String == "ledgerUnreachable")
            #expect(error["message"] as? String == "the ledger is not reachable")
            #expect(error["retryable"] as? Bool == true)
            #expect(!String(buffer: ready.body).contains(driverText))
            let warnings = logs.lines.withLock { $0.filter { $0.hasPrefix("warning ") } }
            #expect(warnings.contains { $0.contains("the ledger does not answer") && $0.contains(driverText) })
        }
    }

    @Test("a full disk: 503 with a fixed message, not counted as another refused write")
    func readyWithAFullDisk() async throws {
        let fixture = try await ServerFixture()
        // A clock that stands still: however slow the machine, the refusal stays recent.
        let frozen = ContinuousClock.now
        let metrics = ServerMetrics(registry: PrometheusCollectorRegistry(), uptime: { frozen })
        try await Application(router: Self.http(fixture, .init(), metrics: metrics).router()).test(.router) { client in
            metrics.ledgerDiskFull()
            for _ in 0..<2 {
                let ready = try await client.execute(uri: "/ready", method: .get)
                #expect(ready.status == .serviceUnavailable)
                let error = Self.error(ready)
                #expect(error["code"] as? String == "storageUnavailable")
                #expect(error["cause"] as? String == "ledgerDiskFull")
                #expect(error["message"] as? String == "the ledger's disk is full")
            }
            #expect(metrics.render().contains("kakin_ledger_disk_full_total 1"))
        }
        try await fixture.store.shutdown()
    }

    @Test("with neither setting, /metrics answers this machine only, not a peer through a proxy")
    func localByDefault() async throws {
        let fixture = try await ServerFixture()
        try await Application(router: Self.http(fixture, .init()).router()).test(.router) { client in
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            #expect(metrics.status == .ok)
            #expect(metrics.headers[.contentType] == "text/plain; version=0.0.4")
            for header in ["X-Forwarded-For", "Forwarded"] {
                let proxied = try await client.execute(
                    uri: "/metrics", method: .get, headers: [HTTPField.Name(header)!: "203.0.113.5"])
                #expect(proxied.status == .unauthorized)
            }
        }
        var open = OperationsConfiguration()
        open.metricsFromAnywhere = true
        try await Application(router: Self.http(fixture, open).router()).test(.router) { client in
            let proxied = try await client.execute(
                uri: "/metrics", method: .get, headers: [HTTPField.Name("X-Forwarded-For")!: "203.0.113.5"])
            #expect(proxied.status == .ok)
        }
        try await fixture.store.shutdown()
    }

    @Test("with a token, /metrics answers only its bearer, and the token never counts as a wrong key")
    func metricsBehindAToken() async throws {
        let fixture = try await ServerFixture()
        let metrics = ServerMetrics()
        let http = Self.http(fixture, .init(metricsToken: Self.token), metrics: metrics)
        try await Application(router: http.router()).test(.router) { client in
            for (headers, name): (HTTPFields, String) in [
                ([:], "no token"), ([.authorization: "Bearer wrong-token-0123456789"], "a wrong token"),
                ([.authorization: "Bearer " + Self.token + "x"], "a longer token"),
                ([.authorization: Self.token], "the token without Bearer"),
                ([.authorization: "Bearer sk_test"], "the secret key"),
            ] {
                for path in ["/metrics", "/metrics/", "//metrics"] {
                    let refused = try await client.execute(uri: path, method: .get, headers: headers)
                    #expect(refused.status == .unauthorized, "\(name) at \(path)")
                    #expect(Self.error(refused)["code"] as? String == "unauthorized")
                    #expect(!String(buffer: refused.body).contains("kakin_"))
                }
            }
            for _ in 0..<3 {
                let scraped = try await client.execute(
                    uri: "/metrics", method: .get, headers: [.authorization: "Bearer " + Self.token])
                #expect(scraped.status == .ok)
                #expect(String(buffer: scraped.body).contains("kakin_http_requests_total"))
            }
            // Scrapes with the right token are no failed sign-ins; other routes are as before.
            #expect(!metrics.render().contains("kakin_sign_in_failures_total{kind=\"api\"}"))
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/ready", method: .get).status == .ok)
        }
        try await fixture.store.shutdown()
    }

    @Test("with a listener of its own, the main listener answers 404 for /metrics, whatever the method")
    func metricsElsewhere() async throws {
        let fixture = try await ServerFixture()
        let http = Self.http(fixture, .init(metricsListen: .init(host: "127.0.0.1", port: 0)))
        try await Application(router: http.router()).test(.router) { client in
            for method: HTTPRequest.Method in [.get, .post, .head] {
                let answer = try await client.execute(uri: "/metrics", method: method)
                #expect(answer.status == .notFound, "\(method)")
            }
            let withToken = try await client.execute(
                uri: "/metrics", method: .get, headers: [.authorization: "Bearer " + Self.token])
            #expect(withToken.status == .notFound)
            #expect(try await client.execute(uri: "/ready", method: .get).status == .ok)
        }
        #expect(!http.routerAndRoutes().routes.contains { $0.path == "metrics" })
        try await fixture.store.shutdown()
    }

    @Test("the listener of /metrics alone serves /metrics, behind the token when there is one, and nothing else")
    func theMetricsRouter() async throws {
        let fixture = try await ServerFixture()
        let guarded = Self.http(
            fixture, .init(metricsToken: Self.token, metricsListen: .init(host: "127.0.0.1", port: 0)))
        try await Application(router: guarded.metricsRouter()).test(.router) { client in
            #expect(try await client.execute(uri: "/metrics", method: .get).status == .unauthorized)
            let scraped = try await client.execute(
                uri: "/metrics", method: .get, headers: [.authorization: "Bearer " + Self.token])
            #expect(scraped.status == .ok)
            #expect(String(buffer: scraped.body).contains("kakin_"))
            #expect(try await client.execute(uri: "/metrics", method: .post).status == .unauthorized)
            let posted = try await client.execute(
                uri: "/metrics", method: .post, headers: [.authorization: "Bearer " + Self.token])
            #expect(posted.status == .methodNotAllowed)
            for path in ["/ready", "/health", "/v1/customers/u?bundleId=\(ServerFixture.bundleID)"] {
                #expect(try await client.execute(uri: path, method: .get).status == .notFound, "\(path)")
            }
        }
        let open = Self.http(fixture, .init(metricsListen: .init(host: "127.0.0.1", port: 0)))
        try await Application(router: open.metricsRouter()).test(.router) { client in
            let scraped = try await client.execute(uri: "/metrics", method: .get)
            #expect(scraped.status == .ok)
        }
        try await fixture.store.shutdown()
    }
}
