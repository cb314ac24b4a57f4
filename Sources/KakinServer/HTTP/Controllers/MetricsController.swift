import AppStoreModels
import Foundation
import Hummingbird
import KakinHTTP
import KakinLedger

/// `GET /v1/metrics/{metric}` (secret key): a subscription metric of one app's environment over a
/// range of UTC days, as JSON or, with `?format=csv` or `Accept: text/csv`, as CSV.
///
/// `GET /v1/retention/saves` (secret key): the app's retention answers over a range of UTC days, by
/// message, with how many subscribers stayed, left or are pending (``RetentionSavesAnswer``); the
/// same `environment`, `from` and `to` as the metrics.
struct MetricsController: RouteController {
    let service: PurchaseService

    /// The longest range asked for at once, in days.
    static let maxDays = 3_700

    func addRoutes(to routes: inout RouteTable) {
        routes.get("v1/metrics/:metric") { request, context in
            let caller = try context.caller(secret: true)
            let app = try caller.app(try RequestReader.bundleID(request), in: service)
            let name = try RequestReader.pathParameter(context, "metric")
            guard let metric = SubscriptionMetric(rawValue: name) else {
                throw ServerError(
                    .notFound,
                    "no metric '\(name)'; the metrics are \(SubscriptionMetric.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let query = try Self.query(request, app: app, now: service.now())
            let answer = try await service.metric(metric, query)
            let parameters = request.uri.queryParameters
            let format = parameters.get("format") ?? (request.headers[.accept]?.contains("text/csv") == true ? "csv" : "json")
            switch format {
            case "json": return JSONBody.response(answer)
            case "csv":
                return Response(
                    status: .ok,
                    headers: [
                        .contentType: "text/csv; charset=utf-8",
                        .contentDisposition: "attachment; filename=\"\(metric.rawValue).csv\"",
                    ], body: .init(byteBuffer: ByteBuffer(string: MetricsCSV.text(answer))))
            default: throw ServerError(.invalidRequest, "format is json or csv, not '\(format)'")
            }
        }
        routes.get("v1/retention/saves") { request, context in
            let caller = try context.caller(secret: true)
            let app = try caller.app(try RequestReader.bundleID(request), in: service)
            let query = try Self.query(request, app: app, now: service.now())
            let days = query.from...query.through
            let saves = try await service.retentionSaves(
                bundleID: app.bundleID, environment: query.environment, days: days)
            return JSONBody.response(
                RetentionSavesAnswer(bundleID: app.bundleID, environment: query.environment, days: days, saves: saves))
        }
    }

    /// The query a request asks for: `environment` (the app's Production when it takes it,
    /// otherwise Sandbox), `from` and `to` (`yyyy-MM-dd`, UTC; the last 30 days to today by
    /// default), `granularity` (`day`, `week`, `month`) and `breakdown` (`product`, `storefront`,
    /// `store`).
    static func query(_ request: Request, app: AppConfiguration, now: Date) throws(ServerError) -> MetricQuery {
        let parameters = request.uri.queryParameters
        let environment: AppStoreEnvironment
        if let name = parameters.get("environment") {
            guard let chosen = [AppStoreEnvironment.production, .sandbox].first(where: { $0.rawValue == name }) else {
                throw ServerError(.invalidRequest, "environment is Production or Sandbox, not '\(name)'")
            }
            environment = chosen
        } else {
            environment = app.defaultEnvironment
        }
        let today = DailyFigures.day(of: now)
        let through = try parameters.get("to").map { text throws(ServerError) in try day(text, name: "to") } ?? today
        let from = try parameters.get("from").map { text throws(ServerError) in try day(text, name: "from") } ?? through - 29
        guard from <= through else { throw ServerError(.invalidRequest, "from is after to") }
        guard through - from < maxDays else {
            throw ServerError(.invalidRequest, "a range is at most \(maxDays) days")
        }
        let granularity = try choice(parameters.get("granularity"), name: "granularity", MetricGranularity.self) ?? .day
        let breakdown = try choice(parameters.get("breakdown"), name: "breakdown", MetricBreakdown.self)
        return MetricQuery(
            bundleID: app.bundleID, environment: environment, from: from, through: through, granularity: granularity,
            breakdown: breakdown)
    }

    private static func choice<T: RawRepresentable & CaseIterable>(
        _ text: String?, name: String, _ type: T.Type
    ) throws(ServerError) -> T? where T.RawValue == String {
        guard let text else { return nil }
        guard let value = T(rawValue: text) else {
            throw ServerError(
                .invalidRequest, "\(name) is one of \(T.allCases.map(\.rawValue).joined(separator: ", ")), not '\(text)'")
        }
        return value
    }

    /// The day number of a `yyyy-MM-dd` date.
    static func day(_ text: String, name: String) throws(ServerError) -> Int {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let dayOfMonth = Int(parts[2]),
            (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(dayOfMonth),
            let date = MetricMath.calendar.date(from: DateComponents(year: year, month: month, day: dayOfMonth)),
            MetricMath.calendar.component(.day, from: date) == dayOfMonth
        else { throw ServerError(.invalidRequest, "\(name) is a date as yyyy-MM-dd, not '\(text)'") }
        return DailyFigures.day(of: date)
    }
}

/// A metric's answer as CSV (RFC 4180): one row per series and period, or per cohort and month.
enum MetricsCSV {
    static func text(_ answer: MetricAnswer) -> String {
        var rows: [[String]] = []
        if let cohorts = answer.cohorts {
            rows.append(["cohort", "size", "currency", "month", "value"])
            for cohort in cohorts {
                for (month, value) in cohort.values.enumerated() {
                    rows.append([cohort.cohort, "\(cohort.size)", cohort.currency ?? "", "\(month)", number(value)])
                }
            }
        } else {
            let extra = columns(answer.metric)
            rows.append(["period", "product", "storefront", "store", "currency", "value"] + extra.map(\.name))
            for series in answer.series {
                for point in series.points {
                    rows.append(
                        [point.period, series.product ?? "", series.storefront ?? "", series.store?.rawValue ?? "",
                         series.currency ?? "", point.value.map(number) ?? ""]
                            + extra.map { point[keyPath: $0.value].map { "\($0)" } ?? "" })
                }
            }
        }
        return rows.map { $0.map(field).joined(separator: ",") }.joined(separator: "\r\n") + "\r\n"
    }

    /// The counts a metric's points carry besides their value.
    static func columns(_ metric: SubscriptionMetric) -> [(name: String, value: KeyPath<MetricPoint, Int64?>)] {
        switch metric {
        case .trialConversion:
            [("started", \.started), ("converted", \.converted), ("cancelled", \.cancelled), ("pending", \.pending)]
        case .churn: [("churned", \.churned), ("active_at_start", \.activeAtStart)]
        case .refunds:
            [("count", \.count), ("revenue", \.revenue), ("for_issue", \.forIssue), ("prorated", \.prorated),
             ("family", \.family)]
        case .proceeds: [("revenue", \.revenue)]
        default: []
        }
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// A field, quoted when it holds a comma, a quote or a line break.
    static func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
