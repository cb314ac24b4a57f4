import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KakinServer
import Testing

#if canImport(Glibc)
import Glibc
#endif

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
    /// (a read returning end-of-file) before the socket's own 10-second receive timeout.
    static func stalledConnectionIsClosed(port: Int) throws -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { return false }
        let partial = Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8)
        _ = partial.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let received = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        return received == 0
    }
}
