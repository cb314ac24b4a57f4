import AppStoreModels
import Foundation
import Hummingbird
import KakinCore
import KakinLedger
import KakinServer

/// The overview's subscription metrics: charts over a chosen range and granularity, broken down
/// by product, storefront or store, and the monthly cohort tables.
extension DashboardRoutes {
    /// The metrics the overview charts, read together.
    static let chartedMetrics: [SubscriptionMetric] = [
        .mrr, .activeSubscriptions, .activeTrials, .churn, .trialConversion, .revenue, .proceeds, .retention, .ltv,
    ]

    /// The overview's choices, read from its query: `range` (days, or `from` and `to`),
    /// `granularity`, `breakdown` and `environment`.
    struct MetricsChoice {
        var from: Int
        var through: Int
        var granularity: MetricGranularity
        var breakdown: MetricBreakdown?
        var environment: AppStoreEnvironment?

        init(_ request: Request, today: Int) {
            let query = request.uri.queryParameters
            through = query.get("to").flatMap { try? MetricsDates.day($0) }.map { min($0, today) } ?? today
            let days = query.get("range").flatMap(Int.init).map { min(max($0, 1), 3_650) } ?? DashboardRoutes.overviewDays
            from = query.get("from").flatMap { try? MetricsDates.day($0) } ?? through - days + 1
            if from > through || through - from >= 3_650 { from = through - days + 1 }
            granularity = query.get("granularity").flatMap(MetricGranularity.init(rawValue:)) ?? .day
            breakdown = query.get("breakdown").flatMap(MetricBreakdown.init(rawValue:))
            environment = query.get("environment").flatMap { name in
                [AppStoreEnvironment.production, .sandbox].first { $0.rawValue == name }
            }
        }

        var view: OverviewView.Choice {
            OverviewView.Choice(
                from: MetricsDates.text(from), to: MetricsDates.text(through),
                granularities: MetricGranularity.allCases.map {
                    OverviewView.Option(value: $0.rawValue, label: $0.rawValue.capitalized, selected: $0 == granularity)
                },
                breakdowns: [OverviewView.Option(value: "", label: "None", selected: breakdown == nil)]
                    + MetricBreakdown.allCases.map {
                        OverviewView.Option(value: $0.rawValue, label: "By \($0.rawValue)", selected: $0 == breakdown)
                    },
                environments: [AppStoreEnvironment.production, .sandbox].map {
                    OverviewView.Option(value: $0.rawValue, label: $0.rawValue, selected: $0 == environment)
                })
        }
    }

    /// The metrics panel of one app for `choice`.
    func metricsPanel(bundleID: String, choice: MetricsChoice) async throws -> OverviewView.Metrics {
        let app = service.apps[bundleID]
        let environment = choice.environment ?? app?.defaultEnvironment ?? .sandbox
        let query = MetricQuery(
            bundleID: bundleID, environment: environment, from: choice.from, through: choice.through,
            granularity: choice.granularity, breakdown: choice.breakdown)
        let answers = try await service.metrics(Self.chartedMetrics, query)
        var charts: [OverviewView.MetricChart] = []
        func add(_ metric: SubscriptionMetric, _ title: String, bars: Bool, format: @escaping (Double) -> String) {
            guard let answer = answers[metric] else { return }
            // Amounts in different currencies are never drawn on one axis.
            let currencies = Set(answer.series.map { $0.currency ?? "" }).sorted()
            for currency in currencies {
                let series = answer.series.filter { ($0.currency ?? "") == currency }
                let caption = currency.isEmpty ? title : "\(title), \(currency)"
                let named = series.map { series in
                    (
                        name: [
                            series.product, series.storefront.map { $0.isEmpty ? "unknown storefront" : $0 },
                            series.store.map(DashboardOverview.name),
                        ].compactMap { $0 }.joined(separator: " "),
                        points: series.points.map {
                            DashboardCharts.Point(label: MetricsDates.label($0.period), value: $0.value ?? 0)
                        }
                    )
                }
                let svg =
                    named.count == 1 && bars
                    ? DashboardCharts.bars(named[0].points, title: caption, format: format)
                    : DashboardCharts.lines(named, title: caption, format: format)
                charts.append(
                    OverviewView.MetricChart(
                        metric: metric.rawValue, caption: caption, svg: svg,
                        legend: named.contains { !$0.name.isEmpty } ? DashboardCharts.legend(named.map(\.name)) : ""))
            }
            if currencies.isEmpty {
                charts.append(
                    OverviewView.MetricChart(
                        metric: metric.rawValue, caption: title, svg: "", legend: "", empty: true))
            }
        }
        let money: (Double) -> String = { DashboardFormat.amount($0 / 1000) }
        let count: (Double) -> String = { String(Int($0)) }
        let percent: (Double) -> String = { String(format: "%.0f%%", $0 * 100) }
        add(.mrr, "Monthly recurring revenue", bars: false, format: money)
        add(.activeSubscriptions, "Active subscriptions", bars: false, format: count)
        add(.activeTrials, "Active trials", bars: false, format: count)
        add(.churn, "Churn", bars: true, format: percent)
        add(.trialConversion, "Trial conversion (by trial start)", bars: true, format: percent)
        add(.revenue, "Revenue", bars: true, format: money)
        add(.proceeds, "Proceeds (App Store after Apple's commission, web in full)", bars: true, format: money)
        var cohorts: [OverviewView.CohortTable] = []
        if let retention = answers[.retention]?.cohorts, !retention.isEmpty {
            cohorts.append(OverviewView.CohortTable(title: "Retention of paid subscriptions", rows: retention, format: percent))
        }
        for currency in Set((answers[.ltv]?.cohorts ?? []).compactMap(\.currency)).sorted() {
            let rows = (answers[.ltv]?.cohorts ?? []).filter { $0.currency == currency }
            cohorts.append(OverviewView.CohortTable(title: "Realized lifetime value per customer, \(currency)", rows: rows, format: money))
        }
        return OverviewView.Metrics(
            environment: environment.rawValue, granularity: choice.granularity.rawValue, charts: charts,
            cohorts: cohorts, hasCohorts: !cohorts.isEmpty)
    }
}

/// Days as the metrics' forms and labels show them.
enum MetricsDates {
    /// The day number of `yyyy-MM-dd`.
    static func day(_ text: String) throws -> Int {
        let parts = text.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3,
            let date = DashboardFormat.calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2])),
            DashboardFormat.calendar.component(.day, from: date) == parts[2]
        else { throw DashboardNotFound(message: "\(text) is not a date") }
        return DailyFigures.day(of: date)
    }

    static func text(_ day: Int) -> String {
        DashboardFormat.day(DailyFigures.start(ofDay: day))
    }

    /// `MM-dd` of a period's `yyyy-MM-dd`.
    static func label(_ period: String) -> String {
        String(period.dropFirst(5))
    }
}

extension OverviewView {
    /// A choice of a form's select.
    struct Option {
        var value: String
        var label: String
        var selected: Bool
    }

    /// The range, granularity, breakdown and environment the charts show.
    struct Choice {
        var from: String
        var to: String
        var granularities: [Option]
        var breakdowns: [Option]
        var environments: [Option]
    }

    struct MetricChart {
        var metric: String
        var caption: String
        var svg: String
        var legend: String
        var empty = false
    }

    /// A cohort table: one row per monthly cohort, one column per month after it.
    struct CohortTable {
        struct Row {
            var cohort: String
            var size: Int64
            var cells: [String]
        }
        var title: String
        var headers: [String]
        var rows: [Row]

        init(title: String, rows cohorts: [MetricCohort], format: (Double) -> String) {
            self.title = title
            let months = cohorts.map(\.values.count).max() ?? 0
            headers = (0..<months).map { "M\($0)" }
            rows = cohorts.map { cohort in
                Row(
                    cohort: cohort.cohort, size: cohort.size,
                    cells: (0..<months).map { $0 < cohort.values.count ? format(cohort.values[$0]) : "" })
            }
        }
    }

    struct Metrics {
        var environment: String
        var granularity: String
        var charts: [MetricChart]
        var cohorts: [CohortTable]
        var hasCohorts: Bool
    }
}
