import Foundation
import Testing

@testable import KakinServer
@testable import KakinLedger

/// The instruments kept per label set count into the same series as instruments made anew.
struct ServerMetricsTests {
    func series(_ text: String, _ prefix: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.hasPrefix(prefix) }
    }

    @Test func requestsAndEventsAddUpPerLabelSet() {
        let metrics = ServerMetrics()
        for _ in 0..<3 {
            metrics.request(route: "/v1/transactions", method: "POST", status: 200, duration: .milliseconds(3))
        }
        metrics.request(route: "/v1/transactions", method: "POST", status: 422, duration: .milliseconds(1))
        for _ in 0..<5 { metrics.ledgerEvent("transaction.recorded") }
        metrics.ledgerEvent("balance.credited")
        let text = metrics.render()
        let requests = series(text, "kakin_http_requests_total{")
        #expect(requests.count == 2, "\(requests)")
        #expect(requests.contains { $0.contains("status=\"200\"") && $0.hasSuffix(" 3") })
        #expect(requests.contains { $0.contains("status=\"422\"") && $0.hasSuffix(" 1") })
        #expect(series(text, "kakin_http_request_duration_seconds_count{").count == 2)
        let events = series(text, "kakin_ledger_events_total{")
        #expect(events.contains { $0.contains("transaction.recorded") && $0.hasSuffix(" 5") }, "\(events)")
        #expect(events.contains { $0.contains("balance.credited") && $0.hasSuffix(" 1") })
    }

    @Test("the metrics job's progress: purchases worked out, and whether it has caught up")
    func metricsJobProgress() {
        let metrics = ServerMetrics()
        metrics.metricsCaughtUp(false)
        metrics.metricsUpdated(200)
        metrics.metricsUpdated(37)
        #expect(series(metrics.render(), "kakin_metrics_caught_up ") == ["kakin_metrics_caught_up 0.0"])
        metrics.metricsCaughtUp(true)
        let text = metrics.render()
        #expect(series(text, "kakin_metrics_purchases_updated_total ") == ["kakin_metrics_purchases_updated_total 237"])
        #expect(series(text, "kakin_metrics_caught_up ") == ["kakin_metrics_caught_up 1.0"])
    }

    @Test func labelSetsBeyondTheCacheStillCount() {
        let metrics = ServerMetrics()
        let routes = ServerMetrics.maxCachedLabelSets + 5
        for index in 0..<routes {
            metrics.request(route: "/r\(index)", method: "GET", status: 200, duration: .zero)
        }
        metrics.request(route: "/r\(routes - 1)", method: "GET", status: 200, duration: .zero)
        let requests = series(metrics.render(), "kakin_http_requests_total{")
        #expect(requests.count == routes)
        #expect(requests.contains { $0.contains("route=\"/r\(routes - 1)\"") && $0.hasSuffix(" 2") })
    }
}
