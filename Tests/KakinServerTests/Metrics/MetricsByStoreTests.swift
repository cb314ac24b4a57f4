import AppStoreModels
import Foundation
import KakinCore
import KakinLedger
import KakinTestSupport
import Testing

@testable import KakinServer

/// The metrics' answers by store: a month of App Store and web sales of the same products
/// (``StoreMonth``), recorded on every engine and in memory, answered by store and in total, and
/// compared with what the sales add up to. Apple's commission is taken off the App Store's sales
/// only.
@Suite("Server: metrics by store")
struct MetricsByStoreTests {
    /// The answers of `metrics` for the month, one period, broken down by `breakdown`.
    static func answers(
        _ ledger: any MetricsLedger, breakdown: MetricBreakdown?, smallBusiness: Bool = false
    ) async throws -> [SubscriptionMetric: MetricAnswer] {
        while try await ledger.updateMetrics(limit: 5) > 0 {}
        let query = MetricQuery(
            bundleID: Fixture.bundleID, environment: .sandbox, from: StoreMonth.firstDay,
            through: StoreMonth.firstDay + StoreMonth.days - 1, granularity: .month, breakdown: breakdown)
        let now = StoreMonth.date(StoreMonth.start + 40 * StoreMonth.dayLength)
        let reading = try await ledger.metrics(
            bundleID: query.bundleID, environment: query.environment, days: query.from...query.through, now: now)
        let report = MetricsReport(query: query, reading: reading, now: now, rates: nil, smallBusiness: smallBusiness)
        let metrics: [SubscriptionMetric] = [.revenue, .proceeds, .refunds, .activeSubscriptions, .newCustomers]
        return Dictionary(uniqueKeysWithValues: metrics.map { ($0, report.answer($0)) })
    }

    /// The month's one value per series of an answer, by store (`nil` when not broken down) and currency.
    static func values(_ answer: MetricAnswer?) -> [PurchaseStore?: [String: Double]] {
        var values: [PurchaseStore?: [String: Double]] = [:]
        for series in answer?.series ?? [] {
            #expect(series.points.count == 1)
            values[series.store, default: [:]][series.currency ?? ""] = series.points.first?.value ?? 0
        }
        return values
    }

    static func doubles(_ amounts: [String: Int64]) -> [String: Double] { amounts.mapValues(Double.init) }

    @Test("revenue, proceeds, refunds, active subscriptions and new customers, by store and in total",
        arguments: RoleImplementation.all)
    func byStoreAndInTotal(_ implementation: RoleImplementation) async throws {
        try await implementation.withMetrics { ledger in
            try await StoreMonth.record(in: ledger)
            for breakdown in [MetricBreakdown.store, nil] {
                let answers = try await Self.answers(ledger, breakdown: breakdown)
                let stores: [PurchaseStore?] = breakdown == nil ? [nil] : [.appStore, .stripe]
                let revenue = Self.values(answers[.revenue])
                let proceeds = Self.values(answers[.proceeds])
                let refunds = Self.values(answers[.refunds])
                let active = Self.values(answers[.activeSubscriptions])
                let customers = Self.values(answers[.newCustomers])
                #expect(Set(revenue.keys) == Set(stores))
                for store in stores {
                    let expected = StoreMonth.expected(store)
                    let name = String(describing: store)
                    #expect(revenue[store] == Self.doubles(expected.revenue), "\(name)")
                    #expect(proceeds[store] == Self.doubles(expected.proceeds), "\(name)")
                    #expect(refunds[store] == Self.doubles(expected.refunded), "\(name)")
                    #expect(active[store] == ["": Double(expected.active[StoreMonth.days - 1])], "\(name)")
                    #expect(customers[store] == ["": Double(expected.newCustomers)], "\(name)")
                    // Each point carries the gross revenue and the refunds' count.
                    let proceedsSeries = answers[.proceeds]?.series.filter { $0.store == store } ?? []
                    #expect(
                        Dictionary(uniqueKeysWithValues: proceedsSeries.map { ($0.currency ?? "", $0.points[0].revenue) })
                            == expected.revenue.mapValues { Optional($0) }, "\(name)")
                    let refundCount = answers[.refunds]?.series.filter { $0.store == store }
                        .compactMap { $0.points[0].count }.reduce(0, +)
                    #expect(refundCount == Int64(expected.refunds), "\(name)")
                }
            }
            // The Small Business Program lowers the commission on the App Store's sales alone.
            let small = Self.values(try await Self.answers(ledger, breakdown: .store, smallBusiness: true)[.proceeds])
            let appStore = StoreMonth.expected(.appStore).revenue.mapValues { Double($0 * 85 / 100) }
            #expect(small[.appStore] == appStore)
            #expect(small[.stripe] == Self.doubles(StoreMonth.expected(.stripe).revenue))
        }
    }

    @Test("an answer broken down by store names the store of each series, in JSON and CSV")
    func wire() throws {
        var answer = MetricAnswer(
            metric: .revenue, bundleId: Fixture.bundleID, environment: "Sandbox", granularity: .month,
            from: "2023-11-01", through: "2023-11-30", breakdown: .store, series: [])
        answer.series = [
            MetricSeries(
                store: .stripe, currency: "USD", points: [MetricPoint(period: "2023-11-01", value: 1000)])
        ]
        let json = String(decoding: try JSONEncoder().encode(answer), as: UTF8.self)
        #expect(json.contains(#""store":"stripe""#) && json.contains(#""breakdown":"store""#))
        #expect(try JSONDecoder().decode(MetricAnswer.self, from: Data(json.utf8)) == answer)
        let csv = MetricsCSV.text(answer).split(separator: "\r\n").map(String.init)
        #expect(csv == ["period,product,storefront,store,currency,value", "2023-11-01,,,stripe,USD,1000"])
    }
}
