import AppStoreModels
import AppStoreSecurity
import Foundation
import KakinTestSupport
import Synchronization
import Testing

@testable import StoreSandbox

/// Counts the requests an endpoint is answering at once.
final class InFlight: Sendable {
    private let counts = Mutex((now: 0, most: 0, total: 0))
    func enter() {
        counts.withLock {
            $0.now += 1; $0.most = max($0.most, $0.now); $0.total += 1
        }
    }
    func leave() { counts.withLock { $0.now -= 1 } }
    var most: Int { counts.withLock { $0.most } }
    var total: Int { counts.withLock { $0.total } }
}

@Suite("Retention Messaging: the sandbox's performance test, over HTTP")
struct RetentionPerformanceTestTests {
    static let small = SandboxRetention.Configuration(
        performanceTest: PerformanceTestConfig(
            maxConcurrentRequests: 4, totalRequests: 20, totalDuration: 60_000, responseTimeThreshold: 700,
            successRateThreshold: 95))

    /// Runs a performance test against an endpoint answering with `answer`, timed by `timing`.
    func run(
        timing: RetentionTiming, inFlight: InFlight = InFlight(),
        answer: @escaping @Sendable (String) async -> (status: Int, body: Data)
    ) async throws -> (PerformanceTestResponse, PerformanceTestResultResponse, URL) {
        try await RetentionTesting.withEndpoint(answer: { jws in
            inFlight.enter()
            defer { inFlight.leave() }
            return await answer(jws)
        }) { url in
            let fixture = try await RetentionFixture(
                transport: URLSessionRetentionTransport(), timing: timing, configuration: Self.small, url: url)
            let started = try await fixture.retention.initiatePerformanceTest(
                PerformanceTestRequest(originalTransactionID: fixture.subscription.originalID),
                bundleID: fixture.engine.signer.bundleID)
            let id = try #require(started.requestID)
            await fixture.retention.waitForPerformanceTest(id)
            let result = try #require(await fixture.retention.performanceTestResult(id))
            return (started, result, url)
        }
    }

    @Test func anEndpointThatAnswersWellInTimePasses() async throws {
        let verifier = try RetentionFixture.verifier()
        let identifiers = Mutex(Set<String>())
        let inFlight = InFlight()
        let (started, result, url) = try await run(timing: .stepping(.milliseconds(1)), inFlight: inFlight) { jws in
            guard let request = try? await verifier.verifyRealtimeRequest(jws) else { return (401, Data()) }
            identifiers.withLock { _ = $0.insert(request.requestIdentifier ?? "") }
            return (200, RetentionTesting.answer(RetentionFixture.messageID))
        }
        #expect(started.config == Self.small.performanceTest)
        #expect(result.result == .pass)
        #expect(result.successRate == 100)
        #expect(result.numPending == 0)
        #expect(result.failures == [:])
        #expect(result.target == url.absoluteString)
        #expect(result.config == Self.small.performanceTest)
        let times = try #require(result.responseTimes)
        #expect((times.p50 ?? 0) > 0 && (times.p50 ?? 0) <= (times.p99 ?? 0))
        #expect((times.p99 ?? 0) < 700)
        #expect(inFlight.total == 20)
        #expect(inFlight.most <= 4, "at most maxConcurrentRequests at once")
        #expect(identifiers.withLock { $0.count } == 20, "each request has its own identifier")
    }

    @Test func anEndpointThatAnswersWronglyFails() async throws {
        let (_, result, _) = try await run(timing: .stepping(.milliseconds(1))) { _ in (500, Data()) }
        #expect(result.result == .fail)
        #expect(result.successRate == 0)
        #expect(result.failures == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE": 20])
    }

    @Test func anEndpointThatAnswersLateFails() async throws {
        // Every answer is measured 800 ms after its request: later than the 700 ms threshold.
        let (_, result, _) = try await run(timing: .stepping(.milliseconds(800))) { _ in
            (200, RetentionTesting.answer(RetentionFixture.messageID))
        }
        #expect(result.result == .fail)
        #expect(result.successRate == 0)
        #expect(result.failures?["TIMED_OUT"] == 20)
        #expect((result.responseTimes?.p50 ?? 0) >= 800)
    }

    @Test func theResponseTimesAreApplesNearestRankPercentiles() {
        let times = PerformanceTestRun.responseTimes(Array(1...100).map(Int64.init))
        #expect(times == PerformanceTestResponseTimes(average: 50, p50: 50, p90: 90, p95: 95, p99: 99))
        #expect(PerformanceTestRun.responseTimes([]).p99 == 0)
    }
}

extension RetentionFixture {
    /// A verifier of what the fixtures' sandbox signs.
    static func verifier() throws -> SignedDataVerifier {
        try SignedDataVerifier(
            rootCertificates: [EngineFixture.authority.root], bundleID: ExampleApp.bundleID,
            appAppleID: ExampleApp.appAppleID, environment: .sandbox)
    }
}

/// Holds every request until the test lets them all go.
actor GatedRetentionTransport: RetentionRequestTransport {
    private var held: [CheckedContinuation<Void, Never>] = []
    private var open = false
    let arrived: AsyncStream<Void>.Continuation

    init(arrived: AsyncStream<Void>.Continuation) {
        self.arrived = arrived
    }

    func post(_ body: Data, to url: URL) async throws -> (status: Int, body: Data) {
        if !open {
            await withCheckedContinuation { continuation in
                held.append(continuation)
                arrived.yield()
            }
        }
        return (200, RetentionTesting.answer(RetentionFixture.messageID))
    }

    func releaseAll() {
        open = true
        for continuation in held { continuation.resume() }
        held = []
    }
}

@Suite("Retention Messaging: a performance test while it runs")
struct RunningPerformanceTestTests {
    @Test func aRunningTestIsPendingAndASecondOneIsRefused() async throws {
        let (arrivals, arrived) = AsyncStream<Void>.makeStream()
        let transport = GatedRetentionTransport(arrived: arrived)
        let fixture = try await RetentionFixture(
            transport: transport, timing: .stepping(.milliseconds(1)),
            configuration: RetentionPerformanceTestTests.small)
        let app = fixture.engine.signer.bundleID
        let request = PerformanceTestRequest(originalTransactionID: fixture.subscription.originalID)
        let started = try await fixture.retention.initiatePerformanceTest(request, bundleID: app)
        let id = try #require(started.requestID)
        var next = arrivals.makeAsyncIterator()
        for _ in 0..<4 { await next.next() }

        let pending = try #require(await fixture.retention.performanceTestResult(id))
        #expect(pending.result == .pending)
        #expect(pending.numPending == 20)
        await #expect {
            _ = try await fixture.retention.initiatePerformanceTest(request, bundleID: app)
        } throws: { error in (error as? AppleAPIFailure)?.code == .existingPerformanceTestRun }

        await transport.releaseAll()
        await fixture.retention.waitForPerformanceTest(id)
        let done = try #require(await fixture.retention.performanceTestResult(id))
        #expect(done.result == .pass)
        #expect(done.numPending == 0)
    }
}
