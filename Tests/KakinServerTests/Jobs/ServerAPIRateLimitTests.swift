import AppStoreModels
import Crypto
import Foundation
import Synchronization
import Testing

@testable import KakinServer

/// Answers from a script, one per request, recording when each came (on the test's clock).
private actor ScriptedExchange: HTTPExchange {
    var script: [HTTPAnswer]
    var requests = 0

    init(_ script: [HTTPAnswer]) {
        self.script = script
    }

    func send(method: String, url: URL, headers: [String: String], body: Data?) async throws -> (status: Int, body: Data) {
        let answer = try await answer(method: method, url: url, headers: headers, body: body)
        return (answer.status, answer.body)
    }

    func answer(method: String, url: URL, headers: [String: String], body: Data?) async throws -> HTTPAnswer {
        requests += 1
        return script.isEmpty ? HTTPAnswer(status: 200, body: Data("{}".utf8)) : script.removeFirst()
    }
}

/// The waits a client asked for.
private final class Waits: Sendable {
    private let list = Mutex<[Duration]>([])
    func append(_ wait: Duration) { list.withLock { $0.append(wait) } }
    var all: [Duration] { list.withLock { $0 } }
}

/// Holds every request until the test lets one go, counting how many are held at once.
private actor GatedExchange: HTTPExchange {
    var held: [CheckedContinuation<Void, Never>] = []
    var most = 0
    let arrived: AsyncStream<Void>.Continuation

    init(arrived: AsyncStream<Void>.Continuation) {
        self.arrived = arrived
    }

    func send(method: String, url: URL, headers: [String: String], body: Data?) async throws -> (status: Int, body: Data) {
        await withCheckedContinuation { continuation in
            held.append(continuation)
            most = max(most, held.count)
            arrived.yield()
        }
        return (200, Data("{}".utf8))
    }

    func letOneGo() {
        if !held.isEmpty { held.removeFirst().resume() }
    }
}

@Suite("App Store Server API: Apple's rate limits")
struct ServerAPIRateLimitTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let refused = Data(#"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#.utf8)

    fileprivate func client(_ exchange: any HTTPExchange, waits: Waits, concurrent: Int = 4) -> AppStoreServerAPIClient {
        let access = ServerAPIAccess(
            baseURL: URL(string: "https://api.example")!, keyID: "KEY1", issuerID: "issuer",
            privateKey: P256.Signing.PrivateKey(), concurrentRequestsPerEndpoint: concurrent)
        var client = AppStoreServerAPIClient(access: access, exchange: exchange, bundleID: "com.example.kakin")
        client.now = { Self.start }
        client.pause = { wait in waits.append(wait) }
        return client
    }

    func history(_ client: AppStoreServerAPIClient) async throws(ServerError) -> HistoryResponse {
        try await client.get(HistoryResponse.self, .getTransactionHistory, path: "inApps/v2/history/1", environment: .sandbox)
    }

    @Test func a429IsSentAgainAtTheTimeItsRetryAfterNames() async throws {
        let retryAt = Int64(Self.start.timeIntervalSince1970 * 1000) + 1_500
        let exchange = ScriptedExchange([
            HTTPAnswer(status: 429, body: Self.refused, headers: ["retry-after": String(retryAt)])
        ])
        let waits = Waits()
        _ = try await history(client(exchange, waits: waits))
        #expect(waits.all == [.milliseconds(1_500)])
        #expect(await exchange.requests == 2)
    }

    @Test func withoutRetryAfterTheWaitsDouble() async throws {
        let exchange = ScriptedExchange(Array(repeating: HTTPAnswer(status: 429, body: Self.refused), count: 3))
        let waits = Waits()
        _ = try await history(client(exchange, waits: waits))
        #expect(waits.all == [.seconds(1), .seconds(2), .seconds(4)])
        #expect(await exchange.requests == 4)
    }

    @Test func aRefusalThatLastsIsThrownWithTheTimeToWait() async throws {
        let exchange = ScriptedExchange(Array(repeating: HTTPAnswer(status: 429, body: Self.refused), count: 10))
        let waits = Waits()
        await #expect {
            _ = try await history(client(exchange, waits: waits))
        } throws: { error in
            guard let error = error as? ServerError else { return false }
            return error.code == .appleUnavailable && error.isRetryable
                && error.appleStatus == APIErrorCode.rateLimitExceeded.rawValue && error.retryAfterSeconds == 9
        }
        #expect(await exchange.requests == 4, "four attempts in all")

        // A Retry-After further away than the longest wait is not waited for at all.
        let later = Int64(Self.start.timeIntervalSince1970 * 1000) + 3_600_000
        let far = ScriptedExchange([HTTPAnswer(status: 429, body: Self.refused, headers: ["retry-after": String(later)])])
        let none = Waits()
        await #expect {
            _ = try await history(client(far, waits: none))
        } throws: { error in (error as? ServerError)?.retryAfterSeconds == 3_601 }
        #expect(none.all.isEmpty)
        #expect(await far.requests == 1)
    }

    @Test func atMostTheConfiguredRequestsToOneEndpointRunAtOnce() async throws {
        let (arrivals, arrived) = AsyncStream<Void>.makeStream()
        let exchange = GatedExchange(arrived: arrived)
        let client = client(exchange, waits: Waits(), concurrent: 2)
        var next = arrivals.makeAsyncIterator()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<6 {
                group.addTask { _ = try await history(client) }
            }
            // Two are let in; each one let go lets the next one in.
            for _ in 0..<6 {
                await next.next()
                #expect(await exchange.held.count <= 2)
                if await exchange.held.count == 2 { await exchange.letOneGo() }
            }
            while await !exchange.held.isEmpty { await exchange.letOneGo() }
            try await group.waitForAll()
        }
        #expect(await exchange.most == 2)
    }
}
