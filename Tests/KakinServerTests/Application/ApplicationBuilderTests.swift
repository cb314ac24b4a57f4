import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinServer
import KakinLedger
import KakinTestSupport
import Testing

@Suite struct ApplicationBuilderTests {
    static func configuration(_ directory: URL) -> ServerConfiguration {
        var app = ServerConfiguration.App(bundleID: "com.example.kakin")
        app.environments = [.sandbox]
        var configuration = ServerConfiguration(
            database: "sqlite:" + directory.appendingPathComponent("ledger.sqlite").path,
            serverKeyPath: directory.appendingPathComponent("server-key.pem").path,
            keys: .init(publishable: "pk_builder", secret: "sk_builder_0123456789"), apps: [app])
        configuration.listen = .init(host: "127.0.0.1", port: 0)
        configuration.idleTimeoutSeconds = 1
        return configuration
    }

    @Test func theBuiltApplicationMigratesBeforeServingAndClosesIdleConnections() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-builder-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let application = try await buildApplication(configuration: Self.configuration(directory))
        // The server key was made on this first start, owner-only.
        let keyAttributes = try FileManager.default.attributesOfItem(
            atPath: directory.appendingPathComponent("server-key.pem").path)
        #expect((keyAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        try await application.test(.live) { client in
            // URLSession, which opens a new connection when the server closed an idle one (the
            // test's idle timeout is short, and a loaded machine can be slower than it).
            let port = try #require(client.port)
            let base = "http://127.0.0.1:\(port)"
            let (_, ready) = try await URLSession.shared.data(from: URL(string: base + "/ready")!)
            #expect((ready as? HTTPURLResponse)?.statusCode == 200, "migrations ran before the first request")
            var request = URLRequest(url: URL(string: base + "/v1/customers/u?bundleId=com.example.kakin")!)
            request.setValue("pk_builder", forHTTPHeaderField: "X-Kakin-Key")
            let (_, customer) = try await URLSession.shared.data(for: request)
            #expect((customer as? HTTPURLResponse)?.statusCode == 200)
            #expect((customer as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Request-Id") != nil)

            // A client that stalls mid-request is disconnected by the idle timeout.
            // The blocking socket calls run on a thread of their own, not on the tasks' threads.
            let closedByServer = await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(returning: (try? Self.stalledConnectionIsClosed(port: port)) ?? false)
                }
            }
            #expect(closedByServer)
        }
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("server-key.pem").path))
    }

    /// Opens a connection, sends half a request, and reports whether the server closed it
    /// (a read meeting its end) before the connection's own 10-second receive timeout.
    static func stalledConnectionIsClosed(port: Int) throws -> Bool {
        guard let connection = openSocket(port: port, sending: "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n") else {
            return false
        }
        return connection.isClosedByServer()
    }

    /// A connection to 127.0.0.1:`port` that has sent `bytes`, with a 10-second receive timeout.
    static func openSocket(port: Int, sending bytes: String) -> RawConnection? {
        guard let connection = try? RawConnection(port: port, receiveTimeout: 10) else { return nil }
        return (try? connection.send(bytes)) == nil ? nil : connection
    }

    @Test func stalledConnectionsBeyondTheCapMakeRoomAndARequestInProgressIsKept() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-builder-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Self.configuration(directory)
        configuration.idleTimeoutSeconds = 60
        configuration.maxConnections = 16
        let application = try await buildApplication(configuration: configuration)
        try await application.test(.live) { client in
            let port = try #require(client.port)
            let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<(String, String, String), Never>) in
                Thread.detachNewThread {
                    // A request in progress: its head is sent, half of its body is not.
                    let body = #"{"bundleId":"com.example.kakin","appUserId":"u","signedTransaction":"x"}"#
                    let busy = Self.openSocket(
                        port: port,
                        sending: "POST /v1/transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Kakin-Key: pk_builder\r\n"
                            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                            + body.prefix(10))
                    // One whole exchange first, so that the server has read that head by now.
                    if let first = Self.openSocket(
                        port: port, sending: "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    {
                        _ = first.receiveAll()
                    }
                    // Forty clients that connect and stall, far beyond the cap of 16.
                    let stalled = (0..<40).compactMap { _ in
                        Self.openSocket(port: port, sending: "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                    }
                    // /health still answers: its connection made room for itself.
                    let health = Self.openSocket(
                        port: port, sending: "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    let healthAnswer = health?.receiveAll() ?? ""
                    // The request in progress was kept: the rest of its body gets it an answer.
                    var busyAnswer = ""
                    if let busy, (try? busy.send(String(body.dropFirst(10)))) != nil {
                        busyAnswer = (try? busy.receive(until: "\r\n\r\n")) ?? ""
                    }
                    let metrics = Self.openSocket(
                        port: port, sending: "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    let metricsAnswer = metrics?.receiveAll() ?? ""
                    withExtendedLifetime(stalled) {}
                    continuation.resume(returning: (healthAnswer, busyAnswer, metricsAnswer))
                }
            }
            let (health, busy, metrics) = outcome
            #expect(health.hasPrefix("HTTP/1.1 200"), "\(health)")
            #expect(busy.hasPrefix("HTTP/1.1 "), "the request in progress was closed")
            #expect(!busy.hasPrefix("HTTP/1.1 5"), "\(busy)")
            let closed = metrics.split(separator: "\n").first { $0.hasPrefix("kakin_http_connections_closed_for_room ") }
                .flatMap { Double($0.split(separator: " ")[1]) }
            #expect((closed ?? 0) >= 24, "\(metrics)")
            #expect(metrics.contains("kakin_http_max_connections 16"))
        }
    }
}
