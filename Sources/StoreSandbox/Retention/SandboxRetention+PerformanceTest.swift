public import AppStoreModels
import Foundation

/// One performance test: its configuration, its target and what it measured so far.
struct PerformanceTestRun: Sendable {
    var config: PerformanceTestConfig
    var target: String
    /// Response times of the requests that ended, in milliseconds.
    var times: [Int64] = []
    var successes = 0
    var failures: [String: Int] = [:]
    var finished = false

    var totalRequests: Int { max(0, config.totalRequests ?? 0) }

    /// The run in Apple's shape: `PENDING` while requests are unanswered, then `PASS` when the
    /// share of requests answered validly within the threshold reaches `successRateThreshold`.
    var result: PerformanceTestResultResponse {
        let total = totalRequests
        let rate = total == 0 ? 0 : successes * 100 / total
        let status: PerformanceTestStatus =
            !finished ? .pending : rate >= (config.successRateThreshold ?? 100) ? .pass : .fail
        return PerformanceTestResultResponse(
            config: config, target: target, result: status, successRate: rate,
            numPending: finished ? 0 : max(0, total - times.count), responseTimes: Self.responseTimes(times),
            failures: failures)
    }

    /// The mean and the nearest-rank percentiles of `times`; zeros when there are none.
    static func responseTimes(_ times: [Int64]) -> PerformanceTestResponseTimes {
        let sorted = times.sorted()
        guard !sorted.isEmpty else { return PerformanceTestResponseTimes(average: 0, p50: 0, p90: 0, p95: 0, p99: 0) }
        func percentile(_ p: Int) -> Int64 {
            let rank = (p * sorted.count + 99) / 100
            return sorted[min(sorted.count, max(1, rank)) - 1]
        }
        return PerformanceTestResponseTimes(
            average: sorted.reduce(0, +) / Int64(sorted.count), p50: percentile(50), p90: percentile(90),
            p95: percentile(95), p99: percentile(99))
    }
}

extension SandboxRetention {
    /// Starts a performance test against the configured real-time URL, as Apple runs it: the
    /// configuration's number of signed requests for `request`'s subscription, at most its
    /// concurrency at once, new requests only while its total duration lasts; each request must be
    /// answered validly within its response time threshold. Requests never sent because the time
    /// ran out count as `TIMED_OUT`.
    func initiatePerformanceTest(
        _ request: PerformanceTestRequest, bundleID: String
    ) async throws(AppleAPIFailure) -> PerformanceTestResponse {
        let url = try configuredRealtimeURL(bundleID: bundleID)
        guard apps[bundleID]?.performanceTests.values.allSatisfy(\.finished) ?? true else {
            throw AppleAPIFailure(.existingPerformanceTestRun, "A performance test is already running.")
        }
        let id = request.originalTransactionID
        guard !id.isEmpty, id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw AppleAPIFailure(.invalidTransactionID, "Invalid transaction id.")
        }
        guard let transaction = try? await engine.transaction(id) else {
            throw AppleAPIFailure(.invalidPerformanceTestRequest, "The transaction was not found.")
        }
        guard transaction.originalID == id else {
            throw AppleAPIFailure(.transactionIDIsNotOriginalTransactionID, "Not an original transaction id.")
        }
        guard let productID = try? await subscriptionProduct(id) else {
            throw AppleAPIFailure(.invalidPerformanceTestRequest, "The transaction is not a subscription.")
        }
        let requestID = UUID().uuidString.lowercased()
        let config = configuration.performanceTest
        apps[bundleID, default: AppState()].performanceTests[requestID] = PerformanceTestRun(
            config: config, target: url.absoluteString)
        runningTests[requestID] = Task {
            await self.run(
                requestID, bundleID: bundleID, url: url, originalTransactionID: id, productID: productID)
        }
        return PerformanceTestResponse(config: config, requestID: requestID)
    }

    /// The result of a performance test in Apple's shape; `nil` for an unknown request ID.
    public func performanceTestResult(_ requestID: String, bundleID: String? = nil) -> PerformanceTestResultResponse? {
        apps[bundleID ?? self.bundleID]?.performanceTests[requestID.lowercased()]?.result
    }

    /// Returns once the performance test `requestID` has ended (at once for an unknown one), so
    /// tests read its result without polling.
    public func waitForPerformanceTest(_ requestID: String) async {
        await runningTests[requestID.lowercased()]?.value
    }

    private func run(
        _ requestID: String, bundleID: String, url: URL, originalTransactionID: String, productID: String
    ) async {
        guard let config = apps[bundleID]?.performanceTests[requestID]?.config else { return }
        let total = max(0, config.totalRequests ?? 0)
        let concurrency = max(1, config.maxConcurrentRequests ?? 1)
        let duration = Duration.milliseconds(config.totalDuration ?? 0)
        let threshold = Duration.milliseconds(config.responseTimeThreshold ?? 700)
        let timing = sender.timing
        let start = timing.reading()
        let sent = await withTaskGroup(of: RetentionSender.Exchange.self, returning: Int.self) { group in
            var sent = 0
            func launch() -> Bool {
                guard sent < total, timing.reading() - start < duration,
                    let (_, jws, _) = try? sign(
                        originalTransactionID: originalTransactionID, productID: productID, locale: "en-US")
                else { return false }
                sent += 1
                group.addTask { [sender] in await sender.send(signedPayload: jws, to: url, deadline: threshold) }
                return true
            }
            while sent < concurrency, launch() {}
            while let exchange = await group.next() {
                record(exchange, requestID: requestID, bundleID: bundleID, threshold: threshold)
                _ = launch()
            }
            return sent
        }
        if total > sent {
            apps[bundleID]?.performanceTests[requestID]?.failures[SendAttemptResult.timedOut.rawValue, default: 0] +=
                total - sent
        }
        apps[bundleID]?.performanceTests[requestID]?.finished = true
    }

    private func record(
        _ exchange: RetentionSender.Exchange, requestID: String, bundleID: String, threshold: Duration
    ) {
        let verdict = evaluate(exchange, limit: threshold)
        guard var run = apps[bundleID]?.performanceTests[requestID] else { return }
        run.times.append(exchange.elapsed.wholeMilliseconds)
        if let failure = verdict.failure {
            run.failures[failure.rawValue, default: 0] += 1
        } else {
            run.successes += 1
        }
        apps[bundleID]?.performanceTests[requestID] = run
    }
}
