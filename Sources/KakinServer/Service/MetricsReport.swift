public import AppStoreModels
import Foundation
public import KakinCore
import KakinLedger

/// A figure a subscription business reads from its ledger (see <doc:Metrics> for what each counts).
public enum SubscriptionMetric: String, CaseIterable, Sendable, Codable {
    /// Monthly recurring revenue of the active paid subscriptions, at the end of each period, per currency.
    case mrr
    /// Active paid subscriptions at the end of each period (grace periods included).
    case activeSubscriptions = "active_subscriptions"
    /// Active free trials at the end of each period.
    case activeTrials = "active_trials"
    /// Active family shares at the end of each period.
    case familyShares = "family_shares"
    /// Customers whose first paid transaction was bought in each period.
    case newCustomers = "new_customers"
    /// Free trials started in each period, and what became of them.
    case trialConversion = "trial_conversion"
    /// Paid subscriptions active before each period and not at its end, over those active before it.
    case churn
    /// Gross revenue of the transactions bought in each period, per currency.
    case revenue
    /// What is paid out of that revenue, per currency: the App Store's sales after Apple's
    /// commission, the web's whole (the payment provider's fees are not known to the ledger).
    case proceeds
    /// Refunds dated in each period: count, amount, share of revenue, by reason and type.
    case refunds
    /// Realized lifetime value per monthly cohort of customers.
    case ltv
    /// Retention per monthly cohort of paid subscriptions.
    case retention

    /// Whether its answer is a cohort table rather than series over time.
    public var isCohortTable: Bool { self == .ltv || self == .retention }
}

/// The length of the periods a series is cut into: UTC days, weeks from Monday, calendar months.
public enum MetricGranularity: String, CaseIterable, Sendable, Codable {
    /// One UTC day.
    case day
    /// Monday to Sunday (UTC).
    case week
    /// A calendar month (UTC).
    case month
}

/// How a series is broken down.
public enum MetricBreakdown: String, CaseIterable, Sendable, Codable {
    /// One series per product.
    case product
    /// One series per storefront.
    case storefront
    /// One series per store: the App Store, and the app's web checkout.
    case store
}

/// Rates that convert amounts to one reporting currency, as the configuration gives them (no
/// rate is ever fetched): `rates["EUR"] = 1.08` means one euro is 1.08 of the reporting currency.
public struct CurrencyRates: Sendable, Hashable {
    /// The currency amounts are converted to (ISO 4217).
    public var reportingCurrency: String
    /// The value of one unit of each currency in the reporting currency.
    public var rates: [String: Double]

    /// Creates a table; the reporting currency converts to itself at 1.
    public init(reportingCurrency: String, rates: [String: Double]) {
        self.reportingCurrency = reportingCurrency
        self.rates = rates
        self.rates[reportingCurrency] = 1
    }

    /// `amount` of `currency` in the reporting currency, to the nearest milliunit; unchanged when
    /// the table has no rate for it.
    func convert(_ amount: Int64, from currency: String) -> (amount: Int64, currency: String) {
        guard let rate = rates[currency] else { return (amount, currency) }
        return (Int64((Double(amount) * rate).rounded()), reportingCurrency)
    }
}

/// What a metric is asked for: an app's environment, a range of UTC days, how they are cut and
/// broken down.
public struct MetricQuery: Sendable, Hashable {
    /// The app.
    public var bundleID: String
    /// The environment; production and sandbox are never mixed.
    public var environment: AppStoreEnvironment
    /// The first day (days since 1970-01-01, UTC).
    public var from: Int
    /// The last day, included.
    public var through: Int
    /// The length of the periods.
    public var granularity: MetricGranularity
    /// One series per product, storefront or store; `nil` for one in all.
    public var breakdown: MetricBreakdown?

    /// Creates a query from its parts.
    public init(
        bundleID: String, environment: AppStoreEnvironment, from: Int, through: Int,
        granularity: MetricGranularity = .day, breakdown: MetricBreakdown? = nil
    ) {
        self.bundleID = bundleID
        self.environment = environment
        self.from = from
        self.through = through
        self.granularity = granularity
        self.breakdown = breakdown
    }
}

/// A metric's answer: series over the periods asked for, or a cohort table.
public struct MetricAnswer: Codable, Sendable, Hashable {
    /// The metric.
    public var metric: SubscriptionMetric
    /// The app.
    public var bundleId: String
    /// The environment.
    public var environment: String
    /// The periods' length.
    public var granularity: MetricGranularity
    /// The first day (`yyyy-MM-dd`).
    public var from: String
    /// The last day (`yyyy-MM-dd`), included.
    public var through: String
    /// The breakdown, when one was asked for.
    public var breakdown: MetricBreakdown?
    /// The currency amounts were converted to, when the configuration gives rates.
    public var reportingCurrency: String?
    /// One series per product, storefront or store (when broken down) and currency (for amounts).
    public var series: [MetricSeries]
    /// The cohort table of `ltv` and `retention`.
    public var cohorts: [MetricCohort]?
}

/// The values of one series, period by period.
public struct MetricSeries: Codable, Sendable, Hashable {
    /// The product, when broken down by product.
    public var product: String?
    /// The storefront, when broken down by storefront (empty when not known).
    public var storefront: String?
    /// The store, when broken down by store.
    public var store: PurchaseStore?
    /// The currency of the amounts (milliunits); `nil` for counts and ratios.
    public var currency: String?
    /// One point per period, in order.
    public var points: [MetricPoint]
}

/// A metric's value for one period, and the counts it is made of.
public struct MetricPoint: Codable, Sendable, Hashable {
    /// The period's first day (`yyyy-MM-dd`).
    public var period: String
    /// The value: a count, an amount in milliunits, or a ratio from 0 to 1; `nil` for a ratio
    /// with nothing to divide by.
    public var value: Double?
    /// Trials started (`trial_conversion`).
    public var started: Int64?
    /// Trials followed by a paid transaction (`trial_conversion`).
    public var converted: Int64?
    /// Trials that ended without one (`trial_conversion`).
    public var cancelled: Int64?
    /// Trials still running (`trial_conversion`).
    public var pending: Int64?
    /// Subscriptions that churned (`churn`).
    public var churned: Int64?
    /// Active paid subscriptions before the period (`churn`).
    public var activeAtStart: Int64?
    /// Transactions refunded (`refunds`).
    public var count: Int64?
    /// Gross revenue of the period in the same currency (`refunds`, `proceeds`).
    public var revenue: Int64?
    /// Refunds for a problem with the app (`refunds`).
    public var forIssue: Int64?
    /// Refunds of a share of a transaction (`refunds`).
    public var prorated: Int64?
    /// Family shares revoked (`refunds`).
    public var family: Int64?

    /// A point with a value only.
    public init(period: String, value: Double?) {
        self.period = period
        self.value = value
    }
}

/// One monthly cohort's row: its size and a value per month after it.
public struct MetricCohort: Codable, Sendable, Hashable {
    /// The cohort's month (`yyyy-MM`).
    public var cohort: String
    /// Customers (`ltv`) or subscriptions (`retention`) in it.
    public var size: Int64
    /// The currency of `ltv` values (milliunits per customer); `nil` for retention.
    public var currency: String?
    /// `ltv`: net revenue per customer within 1, 2, … months of the cohort's first day;
    /// `retention`: the share active and paid 0, 1, … months after their first paid
    /// transaction. Only months that have ended are given.
    public var values: [Double]
}

/// Works out metrics' answers from the ledger's rollups.
struct MetricsReport {
    let query: MetricQuery
    let reading: MetricsReading
    let now: Date
    let rates: CurrencyRates?
    let smallBusiness: Bool

    /// The periods: first and last day of each, clipped to the range.
    var periods: [ClosedRange<Int>] {
        var periods: [ClosedRange<Int>] = []
        var start = query.from
        while start <= query.through {
            let end: Int
            switch query.granularity {
            case .day: end = start
            case .week:
                // 1970-01-01 was a Thursday: day 4 was a Monday.
                let weekday = ((start - 4) % 7 + 7) % 7
                end = start - weekday + 6
            case .month:
                let month = MetricMath.month(ofDay: start)
                end = MetricMath.day(MetricMath.start(ofMonth: month + 1)) - 1
            }
            periods.append(start...min(end, query.through))
            start = min(end, query.through) + 1
        }
        return periods
    }

    /// The key of a series a row counts under.
    struct SeriesKey: Hashable, Comparable {
        var product: String?
        var storefront: String?
        var store: PurchaseStore?
        var currency: String?

        static func < (lhs: Self, rhs: Self) -> Bool {
            (lhs.product ?? "", lhs.storefront ?? "", lhs.store?.rawValue ?? "", lhs.currency ?? "")
                < (rhs.product ?? "", rhs.storefront ?? "", rhs.store?.rawValue ?? "", rhs.currency ?? "")
        }
    }

    func key(product: String, storefront: String, store: PurchaseStore, currency: String?) -> SeriesKey {
        SeriesKey(
            product: query.breakdown == .product ? product : nil,
            storefront: query.breakdown == .storefront ? storefront : nil,
            store: query.breakdown == .store ? store : nil, currency: currency)
    }

    func key(_ day: MetricDay, money: Bool) -> SeriesKey {
        key(product: day.productID, storefront: day.storefront, store: day.store, currency: money ? day.currency : nil)
    }

    func key(_ count: MetricCount) -> SeriesKey {
        key(product: count.productID, storefront: count.storefront, store: count.store, currency: nil)
    }

    /// An amount's key and value, converted when the table has a rate.
    func money(_ day: MetricDay, _ amount: Int64) -> (SeriesKey, Int64) {
        let (converted, currency) = rates?.convert(amount, from: day.currency) ?? (amount, day.currency)
        return (key(product: day.productID, storefront: day.storefront, store: day.store, currency: currency), converted)
    }

    func answer(_ metric: SubscriptionMetric, churned: [[MetricCount]] = []) -> MetricAnswer {
        var answer = MetricAnswer(
            metric: metric, bundleId: query.bundleID, environment: query.environment.rawValue,
            granularity: query.granularity, from: Self.date(query.from), through: Self.date(query.through),
            breakdown: query.breakdown, reportingCurrency: rates?.reportingCurrency, series: [])
        switch metric {
        case .mrr: answer.series = atEnd { day in day.currency.isEmpty ? [] : [money(day, day.counts[.mrrStarts] - day.counts[.mrrEnds])] }
        case .activeSubscriptions: answer.series = atEnd { [(key($0, money: false), $0.counts[.paidStarts] - $0.counts[.paidEnds])] }
        case .activeTrials: answer.series = atEnd { [(key($0, money: false), $0.counts[.trialStarts] - $0.counts[.trialEnds])] }
        case .familyShares: answer.series = atEnd { [(key($0, money: false), $0.counts[.familyStarts] - $0.counts[.familyEnds])] }
        case .newCustomers: answer.series = sums { [(key($0, money: false), $0.counts[.newCustomers])] }
        case .revenue: answer.series = sums { day in day.currency.isEmpty ? [] : [money(day, day.counts[.revenue])] }
        case .proceeds: answer.series = proceeds()
        case .refunds: answer.series = refunds()
        case .trialConversion: answer.series = trialConversion()
        case .churn: answer.series = churn(churned)
        case .ltv: answer.cohorts = lifetimeValue()
        case .retention: answer.cohorts = retention()
        }
        return answer
    }

    /// Per series, the running sum of `values` over every day up to each period's last.
    private func atEnd(_ values: (MetricDay) -> [(SeriesKey, Int64)]) -> [MetricSeries] {
        var running: [SeriesKey: Int64] = [:]
        for day in reading.before { for (key, value) in values(day) { running[key, default: 0] += value } }
        let byDay = Dictionary(grouping: reading.days, by: \.day)
        var points: [SeriesKey: [MetricPoint]] = [:]
        var seen = Set(running.keys)
        for (index, period) in periods.enumerated() {
            for day in period { for row in byDay[day] ?? [] { for (key, value) in values(row) { running[key, default: 0] += value; seen.insert(key) } } }
            for key in seen {
                points[key, default: Array(repeating: MetricPoint(period: "", value: 0), count: index)]
                    .append(MetricPoint(period: Self.date(period.lowerBound), value: Double(running[key] ?? 0)))
            }
        }
        return series(points)
    }

    /// Per series, the sum of `values` over each period's days.
    private func sums(_ values: (MetricDay) -> [(SeriesKey, Int64)]) -> [MetricSeries] {
        var totals: [SeriesKey: [Int: Int64]] = [:]
        let periods = periods
        let index = Self.periodIndex(periods)
        for row in reading.days {
            guard let period = index[row.day] else { continue }
            for (key, value) in values(row) where value != 0 { totals[key, default: [:]][period, default: 0] += value }
        }
        return series(totals.mapValues { values in
            periods.enumerated().map { MetricPoint(period: Self.date($0.element.lowerBound), value: Double(values[$0.offset] ?? 0)) }
        })
    }

    private func series(_ points: [SeriesKey: [MetricPoint]]) -> [MetricSeries] {
        let periods = periods
        return points.keys.sorted().map { key in
            var values = points[key]!
            // A series that appears after the first period starts at zero.
            for index in values.indices where values[index].period.isEmpty {
                values[index].period = Self.date(periods[index].lowerBound)
            }
            return MetricSeries(
                product: key.product, storefront: key.storefront, store: key.store, currency: key.currency,
                points: values)
        }
    }

    /// The figures of each period per series, summed; of one store's sales only when `store` is given.
    private func periodTotals(money withMoney: Bool, store: PurchaseStore? = nil) -> [SeriesKey: [Int: MetricCounts]] {
        let index = Self.periodIndex(periods)
        var totals: [SeriesKey: [Int: MetricCounts]] = [:]
        for row in reading.days where store == nil || row.store == store {
            guard let period = index[row.day] else { continue }
            let key = withMoney ? money(row, 0).0 : key(row, money: false)
            var counts = row.counts
            if withMoney, let rates, rates.rates[row.currency] != nil {
                for column in [MetricColumn.revenue, .revenueSecondYear, .refunded] {
                    counts[column] = rates.convert(counts[column], from: row.currency).amount
                }
            }
            totals[key, default: [:]][period] = (totals[key]?[period] ?? MetricCounts()).adding(counts)
        }
        return totals
    }

    /// Revenue less Apple's commission on the App Store's sales (30 %, or 15 % in the Small
    /// Business Program and for a subscription's transactions after its first year of paid
    /// service); a web sale's proceeds are its revenue, the payment provider's fees being unknown.
    private func proceeds() -> [MetricSeries] {
        let periods = periods
        let appStore = periodTotals(money: true, store: .appStore)
        let web = periodTotals(money: true, store: .stripe)
        let keys = Set(appStore.keys).union(web.keys).filter { $0.currency?.isEmpty == false }
        return keys.sorted().map { key in
            MetricSeries(
                product: key.product, storefront: key.storefront, store: key.store, currency: key.currency,
                points: periods.enumerated().map { index, period in
                    let sold = appStore[key]?[index] ?? MetricCounts()
                    let (gross, second) = (sold[.revenue], sold[.revenueSecondYear])
                    let afterCommission = smallBusiness
                        ? Double(gross) * 0.85 : Double(gross - second) * 0.70 + Double(second) * 0.85
                    let webGross = web[key]?[index]?[.revenue] ?? 0
                    var point = MetricPoint(
                        period: Self.date(period.lowerBound), value: afterCommission.rounded() + Double(webGross))
                    point.revenue = gross + webGross
                    return point
                })
        }
    }

    private func refunds() -> [MetricSeries] {
        let periods = periods
        return periodTotals(money: true).sorted { $0.key < $1.key }.compactMap { key, totals in
            guard totals.values.contains(where: { $0[.refunds] != 0 }) else { return nil }
            return MetricSeries(
                product: key.product, storefront: key.storefront, store: key.store,
                currency: key.currency?.isEmpty == true ? nil : key.currency,
                points: periods.enumerated().map { index, period in
                    let counts = totals[index] ?? MetricCounts()
                    var point = MetricPoint(period: Self.date(period.lowerBound), value: Double(counts[.refunded]))
                    point.count = counts[.refunds]
                    point.revenue = counts[.revenue]
                    point.forIssue = counts[.refundsForIssue]
                    point.prorated = counts[.refundsProrated]
                    point.family = counts[.refundsFamily]
                    return point
                })
        }
    }

    private func trialConversion() -> [MetricSeries] {
        let periods = periods
        let index = Self.periodIndex(periods)
        var pending: [SeriesKey: [Int: Int64]] = [:]
        for trial in reading.pendingTrials {
            guard let day = trial.day, let period = index[day] else { continue }
            pending[key(trial), default: [:]][period, default: 0] += Int64(trial.count)
        }
        let totals = periodTotals(money: false).filter { $0.value.values.contains { $0[.trialsStarted] != 0 } }
        return Set(totals.keys).union(pending.keys).sorted().map { key in
            MetricSeries(
                product: key.product, storefront: key.storefront, store: key.store, currency: nil,
                points: periods.enumerated().map { index, period in
                    let counts = totals[key]?[index] ?? MetricCounts()
                    let (started, converted) = (counts[.trialsStarted], counts[.trialsConverted])
                    let waiting = pending[key]?[index] ?? 0
                    let cancelled = started - converted - waiting
                    var point = MetricPoint(
                        period: Self.date(period.lowerBound),
                        value: converted + cancelled > 0 ? Double(converted) / Double(converted + cancelled) : nil)
                    (point.started, point.converted, point.cancelled, point.pending) = (started, converted, cancelled, waiting)
                    return point
                })
        }
    }

    /// The periods churn is counted over, as instants.
    var churnPeriods: [MetricPeriod] {
        periods.map { MetricPeriod(start: DailyFigures.start(ofDay: $0.lowerBound), end: DailyFigures.start(ofDay: $0.upperBound + 1)) }
    }

    private func churn(_ churned: [[MetricCount]]) -> [MetricSeries] {
        // Active paid subscriptions at the end of the day before each period.
        var running: [SeriesKey: Int64] = [:]
        for day in reading.before { running[key(day, money: false), default: 0] += day.counts[.paidStarts] - day.counts[.paidEnds] }
        let byDay = Dictionary(grouping: reading.days, by: \.day)
        var points: [SeriesKey: [MetricPoint]] = [:]
        var seen = Set(running.keys)
        for (index, period) in periods.enumerated() {
            var lost: [SeriesKey: Int64] = [:]
            for count in index < churned.count ? churned[index] : [] {
                let key = key(count)
                lost[key, default: 0] += Int64(count.count)
                seen.insert(key)
            }
            for key in seen {
                let active = running[key] ?? 0
                var point = MetricPoint(
                    period: Self.date(period.lowerBound), value: active > 0 ? Double(lost[key] ?? 0) / Double(active) : nil)
                (point.churned, point.activeAtStart) = (lost[key] ?? 0, active)
                // The periods before a series appears: nothing was active, nothing churned.
                var none = MetricPoint(period: "", value: nil)
                (none.churned, none.activeAtStart) = (0, 0)
                points[key, default: Array(repeating: none, count: index)].append(point)
            }
            for day in period {
                for row in byDay[day] ?? [] {
                    let key = key(row, money: false)
                    running[key, default: 0] += row.counts[.paidStarts] - row.counts[.paidEnds]
                    seen.insert(key)
                }
            }
        }
        return series(points)
    }

    /// The cohort months of the range.
    private var cohortMonths: ClosedRange<Int> {
        MetricMath.month(ofDay: query.from)...MetricMath.month(ofDay: query.through)
    }

    /// Whether the month `month` has ended at `now`.
    private func ended(_ month: Int) -> Bool {
        DailyFigures.start(ofDay: MetricMath.day(MetricMath.start(ofMonth: month + 1))) <= now
    }

    private func lifetimeValue() -> [MetricCohort] {
        var customers: [Int: Int64] = [:]
        var revenue: [Int: [String: [Int: Int64]]] = [:]
        for row in reading.cohorts where cohortMonths.contains(row.cohort) {
            switch row.kind {
            case .customers: customers[row.cohort, default: 0] += row.value
            case .customerRevenue:
                let (amount, currency) = rates?.convert(row.value, from: row.currency) ?? (row.value, row.currency)
                revenue[row.cohort, default: [:]][currency, default: [:]][row.offset, default: 0] += amount
            default: continue
            }
        }
        var rows: [MetricCohort] = []
        for cohort in customers.keys.sorted() {
            guard let size = customers[cohort], size > 0 else { continue }
            for (currency, byOffset) in (revenue[cohort] ?? [:]).sorted(by: { $0.key < $1.key }) {
                var values: [Double] = []
                var total: Int64 = 0
                var offset = 0
                // Within k months of the cohort's first day: the months before the k-th, once it ended.
                while ended(cohort + offset) {
                    total += byOffset[offset] ?? 0
                    values.append((Double(total) / Double(size)).rounded())
                    offset += 1
                }
                rows.append(MetricCohort(cohort: Self.month(cohort), size: size, currency: currency, values: values))
            }
        }
        return rows
    }

    private func retention() -> [MetricCohort] {
        var sizes: [Int: Int64] = [:]
        var retained: [Int: [Int: Int64]] = [:]
        for row in reading.cohorts where cohortMonths.contains(row.cohort) {
            switch row.kind {
            case .retentionSize: sizes[row.cohort, default: 0] += row.value
            case .retained: retained[row.cohort, default: [:]][row.offset, default: 0] += row.value
            default: continue
            }
        }
        return sizes.keys.sorted().compactMap { cohort in
            guard let size = sizes[cohort], size > 0 else { return nil }
            var values: [Double] = []
            var offset = 0
            // Every subscription's anniversary k months on falls in month cohort + k.
            while ended(cohort + offset) {
                values.append(Double(retained[cohort]?[offset] ?? 0) / Double(size))
                offset += 1
            }
            return MetricCohort(cohort: Self.month(cohort), size: size, currency: nil, values: values)
        }
    }

    static func periodIndex(_ periods: [ClosedRange<Int>]) -> [Int: Int] {
        var index: [Int: Int] = [:]
        for (position, period) in periods.enumerated() { for day in period { index[day] = position } }
        return index
    }

    /// `yyyy-MM-dd` of a day number.
    static func date(_ day: Int) -> String {
        let parts = MetricMath.calendar.dateComponents([.year, .month, .day], from: DailyFigures.start(ofDay: day))
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }

    /// `yyyy-MM` of a month number.
    static func month(_ month: Int) -> String {
        String(format: "%04d-%02d", 1970 + month / 12, month % 12 + 1)
    }
}
