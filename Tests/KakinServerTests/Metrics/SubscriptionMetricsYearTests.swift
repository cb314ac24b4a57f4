import AppStoreModels
import Foundation
import KakinLedger
import KakinServer
import KakinTestSupport
import StoreSandbox
import Testing

/// A year of a subscription business played on the sandbox App Store, delivered to the server as
/// the App Store delivers it, and every metric the server reports checked, period by period,
/// against the definitions worked out independently from what the App Store did.
@Suite("Server: a simulated year of subscription metrics", .serialized)
struct SubscriptionMetricsYearTests {
    /// A question asked of the server.
    struct Question: Hashable, CustomStringConvertible {
        var metric: SubscriptionMetric
        var granularity: MetricGranularity = .day
        var breakdown: MetricBreakdown?

        var description: String {
            "\(metric.rawValue)/\(granularity.rawValue)" + (breakdown.map { " by \($0.rawValue)" } ?? "")
        }
    }

    static let questions: [Question] =
        SubscriptionMetric.allCases.map { Question(metric: $0) }
        + [.churn, .revenue, .activeSubscriptions, .trialConversion, .refunds, .mrr, .proceeds, .newCustomers].map {
            Question(metric: $0, granularity: .month)
        }
        + [
            Question(metric: .activeSubscriptions, breakdown: .product),
            Question(metric: .revenue, breakdown: .product),
            Question(metric: .mrr, breakdown: .product),
            Question(metric: .newCustomers, breakdown: .storefront),
            Question(metric: .mrr, breakdown: .storefront),
            Question(metric: .activeSubscriptions, breakdown: .storefront),
            Question(metric: .activeTrials, breakdown: .product),
        ]

    /// What the server answered to each question.
    typealias Answers = [Question: MetricAnswer]

    @Test("every metric, every day of the year, as the definitions say; a restarted server fed twice agrees", arguments: StoreKind.backends)
    func aYearOfMetrics(_ kind: StoreKind) async throws {
        let plan = YearPlan()
        let catalog = try YearCatalog.load()

        var clock = ContinuousClock.now
        let (answers, log) = try await Self.play(plan, catalog: catalog, on: kind, delivery: Delivery())
        let firstRun = ContinuousClock.now - clock
        let now = Int64(YearRunner.lastDay + 1) * ExpectedMetrics.day + 3_600_000
        let expected = ExpectedMetrics(log: log, firstDay: YearRunner.firstDay, lastDay: YearRunner.lastDay, now: now)
        var mismatches: [String] = []
        for question in Self.questions {
            mismatches += Self.compare(question, expected: expected, answer: answers[question]!)
        }
        Self.report(kind, log: log, duration: firstRun)
        let matches = mismatches.isEmpty
        #expect(
            matches,
            Comment(
                rawValue: "\(mismatches.count) mismatches (metric, series, period, field: expected, found):\n"
                    + mismatches.prefix(20).joined(separator: "\n")))
        Self.checkCoverage(log, expected: expected)

        // The same year on a server restarted half way over its ledger, with every notification
        // delivered twice and some days' in reverse order: the same answers.
        clock = ContinuousClock.now
        let (again, againLog) = try await Self.play(
            plan, catalog: catalog, on: kind, delivery: Delivery(restartDay: 190, duplicated: true, updateEvery: 30))
        print("[\(kind)] second run (restart, notifications twice): \(ContinuousClock.now - clock)")
        #expect(againLog.counts["server restarts"] == 1)
        #expect(againLog.transactions.count == log.transactions.count && againLog.counts == log.counts.merging(["server restarts": 1]) { $1 })
        var differences: [String] = []
        for question in Self.questions where again[question] != answers[question] {
            differences += Self.differences(
                question, expected: Self.fields(answers[question]!), found: Self.fields(again[question]!))
            if answers[question]?.cohorts != again[question]?.cohorts { differences.append("\(question): cohorts differ") }
            if differences.isEmpty { differences.append("\(question): answers differ") }
        }
        let same = differences.isEmpty
        #expect(
            same,
            Comment(
                rawValue: "the restarted run differs in \(differences.count) places:\n"
                    + differences.prefix(20).joined(separator: "\n")))
    }

    // MARK: - Playing the year

    /// Plays the year on a new server over a ledger of `kind` and asks every question at its end.
    static func play(
        _ plan: YearPlan, catalog: SandboxCatalog, on kind: StoreKind, delivery: Delivery
    ) async throws -> (Answers, YearLog) {
        if kind == .postgres {
            var result: (Answers, YearLog)?
            try await PostgresTestDatabase.withSchema { schema in
                result = try await play(plan, catalog: catalog, delivery: delivery) {
                    try await openLedger(.postgres, schema: schema)
                }
            }
            return result!
        }
        if delivery.restartDay == nil {
            return try await play(plan, catalog: catalog, delivery: delivery) { try await openLedger(.memory) }
        }
        // A file, so that the ledger outlives the server that is restarted.
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kakin-metrics-year-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ledger.sqlite").path
        return try await play(plan, catalog: catalog, delivery: delivery) { try await openLedger(.file, path: path) }
    }

    static func play(
        _ plan: YearPlan, catalog: SandboxCatalog, delivery: Delivery,
        open: @escaping @Sendable () async throws -> any LedgerStore
    ) async throws -> (Answers, YearLog) {
        let store = try await open()
        var runner = YearRunner(
            fixture: try await ServerFixture(store: store, catalog: catalog), plan: plan, delivery: delivery,
            reopen: open)
        do {
            try await runner.run()
            var answers: Answers = [:]
            for question in questions {
                answers[question] = try await runner.service.metric(
                    question.metric,
                    MetricQuery(
                        bundleID: ServerFixture.bundleID, environment: .sandbox, from: YearRunner.firstDay,
                        through: YearRunner.lastDay, granularity: question.granularity, breakdown: question.breakdown))
            }
            try await runner.fixture.store.shutdown()
            return (answers, runner.log)
        } catch {
            try? await runner.fixture.store.shutdown()
            throw error
        }
    }

    // MARK: - Comparing

    /// An answer's series as labelled fields: the label joins the product, storefront and currency.
    static func fields(_ answer: MetricAnswer) -> [String: [MetricFields]] {
        var series: [String: [MetricFields]] = [:]
        for line in answer.series {
            let label = [line.product, line.storefront, line.currency].compactMap { $0 }.joined(separator: "/")
            series[label] = line.points.map(MetricFields.init)
        }
        return series
    }

    static func expected(_ question: Question, _ model: ExpectedMetrics) -> [String: [MetricFields]] {
        let (granularity, breakdown) = (question.granularity, question.breakdown)
        switch question.metric {
        case .activeSubscriptions: return model.activeCount(granularity, .paid, breakdown)
        case .activeTrials: return model.activeCount(granularity, .trial, breakdown)
        case .familyShares: return model.activeCount(granularity, .family, breakdown)
        case .mrr: return model.mrr(granularity, breakdown)
        case .newCustomers: return model.newCustomers(granularity, breakdown)
        case .revenue: return model.revenue(granularity, breakdown)
        case .proceeds: return model.proceeds(granularity)
        case .refunds: return model.refunds(granularity)
        case .trialConversion: return model.trialConversion(granularity)
        case .churn: return model.churn(granularity)
        case .ltv, .retention: return [:]
        }
    }

    static func compare(_ question: Question, expected model: ExpectedMetrics, answer: MetricAnswer) -> [String] {
        switch question.metric {
        case .ltv: return compare(question, model.lifetimeValue(), rows(answer))
        case .retention: return compare(question, model.retention(), rows(answer))
        default:
            let periods = model.periods(question.granularity)
            var found: [String] = []
            for line in answer.series where line.points.count != periods.count {
                found.append("\(question) \(line): \(line.points.count) points for \(periods.count) periods")
            }
            return found + differences(question, expected: expected(question, model), found: fields(answer)) { index in
                let day = periods[index].lowerBound
                return ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(day) * 86_400)).prefix(10)
                    .description
            }
        }
    }

    /// Every field that differs, in `question`'s series; a series missing on one side counts as
    /// zeros.
    static func differences(
        _ question: Question, expected: [String: [MetricFields]], found: [String: [MetricFields]],
        period: (Int) -> String = { "period \($0)" }
    ) -> [String] {
        var differences: [String] = []
        for label in Set(expected.keys).union(found.keys).sorted() {
            let mine = expected[label]
            let theirs = found[label]
            let count = max(mine?.count ?? 0, theirs?.count ?? 0)
            for index in 0..<count {
                let left = mine.flatMap { index < $0.count ? $0[index].named : nil }
                let right = theirs.flatMap { index < $0.count ? $0[index].named : nil }
                for position in 0..<12 {
                    let name = (left ?? right)![position].0
                    let a = left?[position].1
                    let b = right?[position].1
                    let same: Bool
                    if left == nil || right == nil {
                        same = (a ?? 0) == 0 && (b ?? 0) == 0
                    } else if let a, let b {
                        same = abs(a - b) < 1e-9
                    } else {
                        same = a == nil && b == nil
                    }
                    if !same {
                        differences.append(
                            "\(question) [\(label.isEmpty ? "all" : label)] \(period(index)) \(name): expected \(a.map { "\($0)" } ?? "nil"), found \(b.map { "\($0)" } ?? "nil")")
                    }
                }
            }
        }
        return differences
    }

    static func rows(_ answer: MetricAnswer) -> [CohortRow] {
        (answer.cohorts ?? []).map { CohortRow(cohort: $0.cohort, size: $0.size, currency: $0.currency, values: $0.values) }
    }

    static func compare(_ question: Question, _ expected: [CohortRow], _ found: [CohortRow]) -> [String] {
        func keyed(_ rows: [CohortRow]) -> [String: CohortRow] {
            Dictionary(rows.map { ("\($0.cohort) \($0.currency ?? "")", $0) }, uniquingKeysWith: { first, _ in first })
        }
        let (mine, theirs) = (keyed(expected), keyed(found))
        var differences: [String] = []
        for key in Set(mine.keys).union(theirs.keys).sorted() where mine[key] != theirs[key] {
            differences.append(
                "\(question) cohort \(key): expected \(mine[key].map { "size \($0.size) \($0.values)" } ?? "none"), found \(theirs[key].map { "size \($0.size) \($0.values)" } ?? "none")")
        }
        return differences
    }

    // MARK: - What the year covered

    static func report(_ kind: StoreKind, log: YearLog, duration: Duration) {
        let transactions = log.transactions.map(LoggedTransaction.init)
        var lines = [
            "[\(kind)] a year of \(YearPlan.days) days played and checked in \(duration)",
            "  transactions: \(transactions.count) (subscriptions \(transactions.filter(\.isSubscription).count), family shares \(transactions.filter(\.family).count), trials \(transactions.filter(\.trial).count), revoked \(transactions.filter { $0.revocation != nil }.count))",
            "  currencies: \(Set(transactions.map(\.currency)).sorted()), uploads \(log.uploads), notifications \(log.notifications), grace periods reported \(Set(log.graces.map { "\($0.originalTransactionID) \($0.periodExpiry)" }).count)",
        ]
        for (what, count) in log.counts.sorted(by: { $0.key < $1.key }) { lines.append("  \(what): \(count)") }
        print(lines.joined(separator: "\n"))
    }

    /// The year must exercise what the metrics distinguish, or a pass proves little.
    static func checkCoverage(_ log: YearLog, expected: ExpectedMetrics) {
        let transactions = expected.transactions
        #expect(Set(transactions.map(\.currency)) == ["JPY", "USD"])
        #expect(transactions.contains { $0.family && $0.revocation != nil })
        #expect(transactions.contains { ($0.percentage ?? 100_000) < 100_000 })
        #expect(transactions.contains { $0.trial })
        #expect(!expected.secondYear.isEmpty)
        #expect(!log.graces.isEmpty)
        for what in [
            "upgrades", "downgrades", "win-back offers redeemed", "family shares", "family members who left",
            "recoveries in grace period", "recoveries in billing retry", "consumables bought", "trials cancelled",
            "promotional offers redeemed (comeback)", "promotional offers redeemed (quarter)",
        ] {
            #expect((log.counts[what] ?? 0) > 0, "the year has no \(what)")
        }
        #expect(transactions.contains { $0.productID == YearCatalog.weekly && $0.isPaid })
    }
}
