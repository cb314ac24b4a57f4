import Foundation
import Hummingbird
import HummingbirdTesting
import KakinServer
import Logging
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `operations` block: read strictly, and applied by the built server to its listeners.
@Suite struct OperationsConfigurationTests {
    static let token = "metrics-token-0123456789"

    static func parse(
        _ operations: [String: Any], environment: [String: String] = [:]
    ) throws(ServerError)
        -> ServerConfiguration
    {
        var object = ServerConfigurationTests.minimal
        object["operations"] = operations
        object["listen"] = ["host": "127.0.0.1", "port": 8080]
        let data = try! JSONSerialization.data(withJSONObject: object)
        return try ServerConfiguration.parse(data, environment: environment)
    }

    static func failure(_ operations: [String: Any]) -> String? {
        do { _ = try parse(operations) } catch { return error.message }
        return nil
    }

    @Test func theBlockIsReadWithTheTokenFromTheEnvironment() throws {
        let none = try ServerConfiguration.parse(
            try JSONSerialization.data(withJSONObject: ServerConfigurationTests.minimal))
        #expect(!none.operations.metricsOpenToAnyone, "by default /metrics answers this machine only")
        #expect(try Self.parse(["metricsFromAnywhere": true]).operations.metricsOpenToAnyone)

        let configuration = try Self.parse(
            ["metricsToken": "env:METRICS_TOKEN", "metricsListen": ["host": "10.0.0.5", "port": 9100]],
            environment: ["METRICS_TOKEN": Self.token])
        #expect(configuration.operations.metricsToken == Self.token)
        #expect(configuration.operations.metricsListen?.host == "10.0.0.5")
        #expect(configuration.operations.metricsListen?.port == 9100)
        #expect(!configuration.operations.metricsOpenToAnyone)

        let defaults = try Self.parse(["metricsListen": [:] as [String: Any]])
        #expect(defaults.operations.metricsListen?.host == "127.0.0.1")
        #expect(defaults.operations.metricsListen?.port == 9090)
        #expect(defaults.operations.metricsToken == nil)
    }

    @Test func mistakesNameTheirKey() {
        #expect(Self.failure(["metricsToken": "short"]) == "operations.metricsToken: must be at least 16 characters")
        #expect(Self.failure(["metricsToken": ""])?.hasPrefix("operations.metricsToken:") == true)
        #expect(Self.failure(["metricsTokn": Self.token]) == "operations.metricsTokn: unknown key")
        #expect(Self.failure(["metricsListen": ["port": 70_000]])?.hasPrefix("operations.metricsListen.port:") == true)
        #expect(Self.failure(["metricsListen": ["prot": 9090]]) == "operations.metricsListen.prot: unknown key")
        for host in ["127.0.0.1", "0.0.0.0"] {
            #expect(
                Self.failure(["metricsListen": ["host": host, "port": 8080]])
                    == "operations.metricsListen: must not be the main listener's address (127.0.0.1:8080)")
        }
        #expect(Self.failure(["metricsListen": ["host": "127.0.0.1", "port": 8081]]) == nil)
    }

    @Test("the built server serves /metrics on its own listener, behind the token, and 404 on the main one")
    func aSecondListener() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-operations-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = ApplicationBuilderTests.configuration(directory)
        configuration.operations = OperationsConfiguration(
            metricsToken: Self.token, metricsListen: .init(host: "127.0.0.1", port: 0))
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        var dependencies = ServerDependencies()
        dependencies.onMetricsServerRunning = { port in continuation.yield(port) }
        let application = try await buildApplication(configuration: configuration, dependencies: dependencies)
        try await application.test(.live) { client in
            var iterator = ports.makeAsyncIterator()
            let metricsPort = try #require(await iterator.next())
            let mainPort = try #require(client.port)
            #expect(metricsPort != mainPort)

            func status(_ port: Int, _ path: String, token: String? = nil) async throws -> Int? {
                var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
                if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
                let (_, response) = try await URLSession.shared.data(for: request)
                return (response as? HTTPURLResponse)?.statusCode
            }
            #expect(try await status(mainPort, "/ready") == 200)
            #expect(try await status(mainPort, "/metrics") == 404)
            #expect(try await status(mainPort, "/metrics", token: Self.token) == 404)
            #expect(try await status(metricsPort, "/metrics") == 401)
            #expect(try await status(metricsPort, "/metrics", token: "wrong-token-0123456789") == 401)
            #expect(try await status(metricsPort, "/metrics", token: Self.token) == 200)
            #expect(try await status(metricsPort, "/ready") == 404)
        }
    }

    @Test("a server whose /metrics is open to every peer says so at start; one local-only or with a token does not")
    func theOpenMetricsWarning() async throws {
        var open = OperationsConfiguration()
        open.metricsFromAnywhere = true
        for operations in [open, OperationsConfiguration(), OperationsConfiguration(metricsToken: Self.token)] {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-operations-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            var configuration = ApplicationBuilderTests.configuration(directory)
            configuration.operations = operations
            let logs = RecordedLogs()
            var dependencies = ServerDependencies()
            dependencies.logger = Logger(label: "kakin.test") { _ in RecordedLogHandler(logs: logs) }
            let application = try await buildApplication(configuration: configuration, dependencies: dependencies)
            try await application.test(.router) { _ in }
            let warned = logs.lines.withLock { lines in
                lines.contains { $0.hasPrefix("warning /metrics answers anyone who can reach port") }
            }
            #expect(warned == operations.metricsOpenToAnyone)
        }
    }
}
