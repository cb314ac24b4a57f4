import AppStoreModels
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinTestSupport
import StoreSandbox
import Testing

@Suite struct EventStreamTests {
    /// The parts of one `transaction` event.
    struct Event {
        var id: Int
        var transaction: [String: Any]
    }

    static func event(in text: String) throws -> Event {
        var id: Int?
        var data: String?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("id: ") { id = Int(line.dropFirst(4)) }
            if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
        }
        let object = try JSONSerialization.jsonObject(with: Data(try #require(data).utf8)) as? [String: Any]
        return Event(
            id: try #require(id), transaction: try #require(object?["transaction"] as? [String: Any]))
    }

    /// A stream of updates: a GET for `path` with `headers` on a connection of its own, read as it
    /// arrives (each read waits 30 seconds at most).
    static func stream(port: Int, path: String, headers: [String: String] = [:]) throws -> RawConnection {
        let connection = try RawConnection(port: port, receiveTimeout: 30)
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try connection.send(request + "\r\n")
        return connection
    }

    /// The next `transaction` event, skipping keep-alive comments.
    static func nextEvent(_ stream: RawConnection) async throws -> Event {
        while true {
            let block = try await stream.next(until: "\n\n")
            if block.contains("event: transaction\n") { return try event(in: block) }
        }
    }

    @Test func purchasesArriveAsEventsAndLastEventIDResumes() async throws {
        let service = try OfferCatalog.service()
        let engine = service.engine
        _ = try await engine.createTester(name: "s@example.com", id: "s")
        try await Application(router: service.router()).test(.live) { client in
            let port = try #require(client.port)
            let stream = try Self.stream(
                port: port, path: "/v1/device/testers/s/updates?keepalive=0.2", headers: ["Accept": "text/event-stream"]
            )
            let head = try await stream.next(until: ": connected\n\n")
            #expect(head.hasPrefix("HTTP/1.1 200"))
            #expect(head.lowercased().contains("content-type: text/event-stream"))

            let first = try #require(
                try await engine.purchase(.init(testerID: "s", productID: "com.example.kakin.coins")).transaction)
            let event = try await Self.nextEvent(stream)
            #expect(event.transaction["transactionId"] as? String == first.id)
            #expect(event.id == (try await engine.updates(of: "s", after: 0).lastSequence))

            // A refund changes the transaction: the open stream gets it as the next event.
            try await engine.refund(first.id)
            let refunded = try await Self.nextEvent(stream)
            #expect(refunded.id > event.id)
            #expect(refunded.transaction["revocationDate"] != nil)

            // A client reconnecting with Last-Event-ID gets only what came after it.
            let resumed = try Self.stream(
                port: port, path: "/v1/device/testers/s/updates/stream?keepalive=0.2",
                headers: ["Last-Event-ID": String(refunded.id)])
            _ = try await resumed.next(until: ": connected\n\n")
            let second = try #require(
                try await engine.purchase(.init(testerID: "s", productID: "com.example.kakin.coins", quantity: 3))
                    .transaction)
            let next = try await Self.nextEvent(resumed)
            #expect(next.transaction["transactionId"] as? String == second.id)
            #expect(next.id > refunded.id)
            // And one starting over from the beginning replays every update in order.
            let replay = try Self.stream(
                port: port, path: "/v1/device/testers/s/updates/stream?after=0&keepalive=0.2")
            _ = try await replay.next(until: ": connected\n\n")
            var ids: [Int] = []
            for _ in 0..<3 { ids.append(try await Self.nextEvent(replay).id) }
            #expect(ids == ids.sorted())
            #expect(ids.last == next.id)
        }
    }

    @Test func anIdleStreamSendsKeepAliveComments() async throws {
        let service = try OfferCatalog.service()
        _ = try await service.engine.createTester(name: "k@example.com", id: "k")
        try await Application(router: service.router()).test(.live) { client in
            let stream = try Self.stream(
                port: try #require(client.port), path: "/v1/device/testers/k/updates/stream?keepalive=0.05")
            _ = try await stream.next(until: ": connected\n\n")
            #expect(try await stream.next(until: "\n\n").hasSuffix(": keep-alive\n\n"))
            let bad = try await client.execute(uri: "/v1/device/testers/k/updates/stream?keepalive=0", method: .get)
            #expect(bad.status == .badRequest)
            let ghost = try await client.execute(uri: "/v1/device/testers/ghost/updates/stream", method: .get)
            #expect(ghost.status == .notFound)
        }
    }
}
