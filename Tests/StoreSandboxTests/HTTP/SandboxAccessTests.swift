import AppStoreModels
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import NIOCore
import StoreSandbox
import Testing

/// A sandbox reachable from other hosts answers its device and control APIs to this machine
/// only, or to other hosts presenting its token. The sockets are on 127.0.0.1; a peer on another
/// host is played by a policy whose `isLocal` says no.
@Suite struct SandboxAccessTests {
    static let token = "sandbox-token-0123456789"
    static let elsewhere: @Sendable (SocketAddress?) -> Bool = { _ in false }

    func makeService() throws -> SandboxService {
        let catalog = try ExampleApp.catalog()
        let engine = try ExampleSandbox.engine(
            catalog: catalog, authority: EngineFixture.authority, clock: .manual(at: EngineFixture.start))
        return SandboxService(engine: engine, catalog: catalog, configuration: .init(sharedSecret: "secret"))
    }

    static func json(_ object: Any) -> ByteBuffer {
        ByteBuffer(bytes: try! JSONSerialization.data(withJSONObject: object))
    }

    static func code(_ response: TestResponse) -> String? {
        let object = (try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) as? [String: Any]
        return (object?["error"] as? [String: Any])?["code"] as? String
    }

    /// Requests that mint purchases, change testers or point notifications elsewhere.
    static let guarded: [(String, HTTPRequest.Method, ByteBuffer?)] = [
        ("/v1/control/testers", .post, json(["name": "mallory@example.com", "id": "mallory"])),
        ("/v1/control/settings", .put, json(["notificationURL": "http://attacker.invalid/hook"])),
        ("/v1/device/payments", .post, json(["testerID": "jp", "productID": "com.example.kakin.removeAd"])),
        ("/v1/device/testers/jp/transactions/unfinished", .get, nil),
        ("/v1/control/testers", .get, nil),
    ]

    @Test("another host without a token is refused the device and control APIs, and changes nothing")
    func otherHostsAreRefused() async throws {
        let service = try makeService()
        _ = try await service.engine.createTester(name: "jp@example.com", storefront: "JPN", id: "jp")
        let before = await service.engine.settings
        let app = Application(
            router: service.router(access: SandboxAccessPolicy(.loopbackOnly, isLocal: Self.elsewhere)),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            for (path, method, body) in Self.guarded {
                let answer = try await client.execute(uri: path, method: method, body: body)
                #expect(answer.status == .forbidden, "\(method) \(path)")
                #expect(Self.code(answer) == "forbidden")
            }
            // Apple's own APIs and the health check are not the device's or the control's.
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok)
            let receipt = try await client.execute(
                uri: "/verifyReceipt", method: .post, body: Self.json(["receipt-data": "AAAA", "password": "secret"]))
            #expect(receipt.status != .forbidden)
        }
        #expect(await service.engine.testers().map(\.id) == ["jp"])
        #expect(await service.engine.settings.notificationURL == before.notificationURL)
        #expect(await service.engine.unfinishedTransactions(of: "jp").isEmpty)
    }

    @Test("this machine is let in: the real peer check sees 127.0.0.1 as loopback")
    func loopbackPeersAreLetIn() async throws {
        let service = try makeService()
        let app = Application(
            router: service.router(access: SandboxAccessPolicy(.loopbackOnly)),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let created = try await client.execute(
                uri: "/v1/control/testers", method: .post, body: Self.json(["name": "jp@example.com", "id": "jp"]))
            #expect(created.status == .created)
            let listed = try await client.execute(uri: "/v1/control/testers", method: .get)
            #expect(listed.status == .ok)
        }
    }

    @Test("with a token, another host gets in with the token only")
    func otherHostsWithTheToken() async throws {
        let service = try makeService()
        let app = Application(
            router: service.router(access: SandboxAccessPolicy(.loopbackOrToken(Self.token), isLocal: Self.elsewhere)),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let create = Self.json(["name": "jp@example.com", "id": "jp"])
            for header in [nil, "Bearer wrong-token-0123456789", "Bearer " + Self.token + "x", Self.token, "Basic abc"]
            {
                var headers: HTTPFields = [:]
                if let header { headers[.authorization] = header }
                let refused = try await client.execute(
                    uri: "/v1/control/testers", method: .post, headers: headers, body: create)
                #expect(refused.status == .unauthorized, "\(header ?? "no header")")
                #expect(refused.headers[.wwwAuthenticate] == "Bearer")
                #expect(Self.code(refused) == "unauthorized")
            }
            let bearer: HTTPFields = [.authorization: "Bearer " + Self.token]
            let created = try await client.execute(
                uri: "/v1/control/testers", method: .post, headers: bearer, body: create)
            #expect(created.status == .created)
            let bought = try await client.execute(
                uri: "/v1/device/payments", method: .post, headers: bearer,
                body: Self.json(["testerID": "jp", "productID": "com.example.kakin.removeAd"]))
            #expect(bought.status == .ok)
        }
        #expect(await service.engine.testers().map(\.id) == ["jp"])
    }

    @Test func peersOnThisMachine() throws {
        for (ip, local) in [
            ("127.0.0.1", true), ("127.45.6.7", true), ("::1", true), ("::ffff:127.0.0.1", true),
            ("10.0.0.1", false), ("192.168.1.5", false), ("::ffff:10.0.0.1", false), ("fe80::1", false),
            ("128.0.0.1", false),
        ] {
            #expect(SandboxAccessPolicy.isLoopback(try SocketAddress(ipAddress: ip, port: 1)) == local, "\(ip)")
        }
        #expect(!SandboxAccessPolicy.isLoopback(nil), "an unknown peer is not trusted")
    }

    @Test func theBoundHostDecidesThePolicy() {
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"] {
            #expect(SandboxAccessPolicy.forHost(host, token: nil).rule == .everyone, "\(host)")
        }
        for host in ["0.0.0.0", "::", "192.168.1.5", "kakin.local", "127.0.0.1.example.com", "127.0.0.256"] {
            #expect(SandboxAccessPolicy.forHost(host, token: nil).rule == .loopbackOnly, "\(host)")
        }
        #expect(SandboxAccessPolicy.forHost("0.0.0.0", token: Self.token).rule == .loopbackOrToken(Self.token))
    }
}
