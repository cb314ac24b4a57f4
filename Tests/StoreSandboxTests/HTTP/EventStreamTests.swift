import AppStoreModels
import Foundation
import Hummingbird
import HummingbirdTesting
import StoreSandbox
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain HTTP/1.1 client over a TCP socket that reads a response as it arrives, for streams that
/// never end. Blocking reads run on their own thread, never on the concurrency pool.
final class StreamingHTTPClient: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let socket: Int32
    private let received = Mutex<[UInt8]>([])
    /// How many received bytes ``next(until:)`` has handed out.
    private let consumed = Mutex(0)

    /// Connects to 127.0.0.1:`port` and sends a GET for `path` with `headers`.
    init(port: Int, path: String, headers: [String: String] = [:]) throws {
        #if canImport(Glibc)
        let handle = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let handle = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard handle >= 0 else { throw Failure(description: "socket() failed") }
        socket = handle
        // A bound on every read, so a broken stream fails the test instead of hanging it.
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(handle, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(handle, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(handle)
            throw Failure(description: "cannot connect to port \(port)")
        }
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ send(handle, $0.baseAddress, $0.count, 0) }) == bytes.count else {
            close(handle)
            throw Failure(description: "cannot send the request")
        }
    }

    deinit { close(socket) }

    /// The text received after what earlier calls consumed, up to and including the first
    /// occurrence of `marker`; reads from the socket until it arrives.
    func next(until marker: String) async throws -> String {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
            let thread = Thread { continuation.resume(with: Result { try self.blockingNext(until: marker) }) }
            thread.start()
        }
    }

    private func blockingNext(until marker: String) throws -> String {
        let pattern = Array(marker.utf8)
        while true {
            let bytes = received.withLock { $0 }
            let start = consumed.withLock { $0 }
            if bytes.count - start >= pattern.count {
                for index in start...(bytes.count - pattern.count)
                where bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
                    let end = index + pattern.count
                    consumed.withLock { $0 = end }
                    return String(decoding: bytes[start..<end], as: UTF8.self)
                }
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else {
                throw Failure(
                    description: "the stream ended or timed out before \(marker): "
                        + String(decoding: bytes[start...], as: UTF8.self))
            }
            received.withLock { $0.append(contentsOf: buffer[0..<count]) }
        }
    }
}

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

    /// The next `transaction` event, skipping keep-alive comments.
    static func nextEvent(_ stream: StreamingHTTPClient) async throws -> Event {
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
            let stream = try StreamingHTTPClient(
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
            let resumed = try StreamingHTTPClient(
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
            let replay = try StreamingHTTPClient(
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
            let stream = try StreamingHTTPClient(
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
