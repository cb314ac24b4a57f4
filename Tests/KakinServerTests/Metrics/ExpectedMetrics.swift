import AppStoreModels
import Foundation
import KakinServer
import StoreSandbox

/// A transaction as the App Store left it, in the terms the metrics' definitions use (instants in
/// milliseconds since 1970).
struct LoggedTransaction: Sendable {
    var id: String
    var originalID: String
    var owner: String
    var productID: String
    var isSubscription: Bool
    var quantity: Int64
    var purchase: Int64
    var expiry: Int64?
    var revocation: Int64?
    var forIssue: Bool
    var percentage: Int?
    var price: Int64
    var currency: String
    var storefront: String
    var family: Bool
    var trial: Bool

    init(_ transaction: SandboxTransaction) {
        id = transaction.id
        originalID = transaction.originalID
        owner = transaction.testerID
        productID = transaction.productID
        isSubscription = transaction.productType == .autoRenewableSubscription
        quantity = Int64(transaction.quantity)
        purchase = transaction.purchaseDate.epochMilliseconds
        expiry = transaction.expiresDate?.epochMilliseconds
        revocation = transaction.revocationDate?.epochMilliseconds
        forIssue = transaction.revocationReason == .appIssue
        percentage = transaction.revocationPercentage
        price = transaction.priceMilliunits
        currency = transaction.currency
        storefront = transaction.storefront
        family = transaction.ownership == .familyShared
        trial = transaction.offerDiscountType == .freeTrial
    }

    /// When it stops giving access: its expiry, or its revocation when earlier.
    var end: Int64? { expiry.map { min($0, revocation ?? $0) } }
    var isPaid: Bool { !trial && !family }
    /// What the customer paid: price × quantity; family shares pay nothing.
    var amount: Int64 { family ? 0 : price * quantity }
    /// What a refund gave back: the share refunded of the amount.
    var refunded: Int64 {
        guard revocation != nil else { return 0 }
        guard let percentage, percentage < 100_000 else { return amount }
        return roundedDivision(amount * Int64(percentage), 100_000)
    }

    /// The price normalized to a month, as the definition of MRR states it.
    var monthly: Int64 {
        guard let expiry else { return 0 }
        let days = Double(expiry - purchase) / 86_400_000
        if days < 27 {
            let weeks = max(1, (days / 7).rounded())
            return Int64((Double(amount) * 52 / 12 / weeks).rounded())
        }
        let months = max(1, (days / 30.436875).rounded())
        return Int64((Double(amount) / months).rounded())
    }
}

/// `value / divisor` to the nearest integer, halves away from zero.
func roundedDivision(_ value: Int64, _ divisor: Int64) -> Int64 {
    value >= 0 ? (value + divisor / 2) / divisor : -((-value + divisor / 2) / divisor)
}

/// What a subscription is at an instant.
enum CoverState: Equatable {
    case paid, trial, family
}

/// Every figure of Metrics.md worked out from the year's log, directly from the definitions: a
/// subscription's state at the end of each day, sums over the days, cohorts.
struct ExpectedMetrics {
    static let day: Int64 = 86_400_000

    let transactions: [LoggedTransaction]
    let subscriptions: [String: [LoggedTransaction]]
    /// Per subscription, the grace periods reported: the expiry of the period Apple failed to renew
    /// → the grace period's expiry.
    let graces: [String: [Int64: Set<Int64>]]
    let firstDay: Int
    let lastDay: Int
    let now: Int64

    init(log: YearLog, firstDay: Int, lastDay: Int, now: Int64) {
        transactions = log.transactions.map(LoggedTransaction.init).sorted { ($0.purchase, $0.id) < ($1.purchase, $1.id) }
        subscriptions = Dictionary(grouping: transactions.filter(\.isSubscription), by: \.originalID)
        var graces: [String: [Int64: Set<Int64>]] = [:]
        for grace in log.graces {
            graces[grace.originalTransactionID, default: [:]][grace.periodExpiry, default: []].insert(grace.graceExpiry)
        }
        self.graces = graces
        self.firstDay = firstDay
        self.lastDay = lastDay
        self.now = now
    }

    static func endOf(_ day: Int) -> Int64 { Int64(day + 1) * Self.day - 1 }
    static func dayOf(_ instant: Int64) -> Int { Int(instant / Self.day) }

    // MARK: - A subscription at an instant

    /// The transaction a subscription is active by at `instant`, and whether in a grace period.
    func covering(_ transactions: [LoggedTransaction], at instant: Int64) -> (LoggedTransaction, grace: Bool)? {
        // Purchased at or before it, expiring after it, not revoked by then: the one purchased last.
        if let covering = transactions.last(where: { $0.purchase <= instant && instant < ($0.end ?? $0.purchase) }) {
            return (covering, false)
        }
        // Otherwise: the period that ended last before it, if Apple failed to renew it and reported
        // a grace period not over yet, and nothing was bought since (a renewal ends the grace).
        guard let lastEnd = transactions.compactMap(\.end).filter({ $0 <= instant }).max(),
            let expired = transactions.last(where: { $0.purchase < lastEnd && lastEnd <= ($0.end ?? $0.purchase) }),
            expired.end == expired.expiry, expired.expiry == lastEnd,
            !transactions.contains(where: { $0.purchase >= lastEnd && $0.purchase <= instant }),
            let reported = graces[expired.originalID]?[lastEnd],
            let graceEnd = reported.filter({ $0 > lastEnd }).min(), instant < graceEnd
        else { return nil }
        return (expired, true)
    }

    func state(_ transactions: [LoggedTransaction], at instant: Int64) -> (CoverState, LoggedTransaction)? {
        guard let (transaction, _) = covering(transactions, at: instant) else { return nil }
        return (transaction.family ? .family : transaction.trial ? .trial : .paid, transaction)
    }

    // MARK: - Series

    /// A series' label: its product, storefront or currency.
    typealias Label = String

    /// Each period of the range: its first and last day.
    func periods(_ granularity: MetricGranularity) -> [ClosedRange<Int>] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var periods: [ClosedRange<Int>] = []
        var start = firstDay
        while start <= lastDay {
            var end = start
            switch granularity {
            case .day: end = start
            case .week: end = start + (6 - ((start - 4) % 7 + 7) % 7)
            case .month:
                let date = Date(timeIntervalSince1970: TimeInterval(start) * 86_400)
                let next = calendar.date(byAdding: .month, value: 1, to: calendar.date(from: calendar.dateComponents([.year, .month], from: date))!)!
                end = Int(next.timeIntervalSince1970 / 86_400) - 1
            }
            periods.append(start...min(end, lastDay))
            start = min(end, lastDay) + 1
        }
        return periods
    }

    /// The figure at the end of each period: `value` sums what each subscription in `state`
    /// contributes, under its label.
    func atEnd(
        _ granularity: MetricGranularity, _ wanted: CoverState,
        _ value: (LoggedTransaction) -> [(Label, Int64)]
    ) -> [Label: [MetricFields]] {
        let periods = periods(granularity)
        var series: [Label: [MetricFields]] = [:]
        for (index, period) in periods.enumerated() {
            let instant = Self.endOf(period.upperBound)
            for transactions in subscriptions.values {
                guard let (state, transaction) = state(transactions, at: instant), state == wanted else { continue }
                for (label, amount) in value(transaction) {
                    series[label, default: Array(repeating: MetricFields(value: 0), count: periods.count)][index].value! += Double(amount)
                }
            }
        }
        return series
    }

    /// The sum over each period of what each day adds.
    func sums(_ granularity: MetricGranularity, _ items: [(day: Int, label: Label, amount: Int64)]) -> [Label: [MetricFields]] {
        let periods = periods(granularity)
        var series: [Label: [MetricFields]] = [:]
        for item in items {
            guard let index = periods.firstIndex(where: { $0.contains(item.day) }) else { continue }
            series[item.label, default: Array(repeating: MetricFields(value: 0), count: periods.count)][index].value! += Double(item.amount)
        }
        return series
    }

    static func label(_ breakdown: MetricBreakdown?, product: String, storefront: String, currency: String? = nil) -> Label {
        var parts: [String] = []
        if breakdown == .product { parts.append(product) }
        if breakdown == .storefront { parts.append(storefront) }
        if let currency { parts.append(currency) }
        return parts.joined(separator: "/")
    }

    // MARK: - The metrics

    func activeCount(_ granularity: MetricGranularity, _ state: CoverState, _ breakdown: MetricBreakdown?) -> [Label: [MetricFields]] {
        atEnd(granularity, state) { [(Self.label(breakdown, product: $0.productID, storefront: $0.storefront), Int64(1))] }
    }

    func mrr(_ granularity: MetricGranularity, _ breakdown: MetricBreakdown?) -> [Label: [MetricFields]] {
        atEnd(granularity, .paid) {
            [(Self.label(breakdown, product: $0.productID, storefront: $0.storefront, currency: $0.currency), $0.monthly)]
        }
    }

    /// Each customer's first transaction with a price, neither a trial nor a family share.
    var firstPayments: [String: LoggedTransaction] {
        var first: [String: LoggedTransaction] = [:]
        for transaction in transactions where transaction.isPaid && transaction.price > 0 {
            if first[transaction.owner] == nil { first[transaction.owner] = transaction }
        }
        return first
    }

    func newCustomers(_ granularity: MetricGranularity, _ breakdown: MetricBreakdown?) -> [Label: [MetricFields]] {
        sums(granularity, firstPayments.values.map {
            (Self.dayOf($0.purchase), Self.label(breakdown, product: $0.productID, storefront: $0.storefront), Int64(1))
        })
    }

    func revenue(_ granularity: MetricGranularity, _ breakdown: MetricBreakdown?) -> [Label: [MetricFields]] {
        sums(granularity, transactions.filter { $0.amount != 0 }.map {
            (Self.dayOf($0.purchase), Self.label(breakdown, product: $0.productID, storefront: $0.storefront, currency: $0.currency), $0.amount)
        })
    }

    /// The paid subscription transactions bought after a year of paid service (a gap over 60 days
    /// starts the count again).
    var secondYear: Set<String> {
        var found = Set<String>()
        for transactions in subscriptions.values {
            var served: Int64 = 0
            var coveredUntil: Int64?
            for transaction in transactions where transaction.isPaid {
                guard let end = transaction.end else { continue }
                if let coveredUntil, transaction.purchase - coveredUntil > 60 * Self.day { served = 0 }
                if served >= 365 * Self.day { found.insert(transaction.id) }
                served += max(0, end - max(transaction.purchase, coveredUntil ?? transaction.purchase))
                coveredUntil = max(coveredUntil ?? end, end)
            }
        }
        return found
    }

    func proceeds(_ granularity: MetricGranularity) -> [Label: [MetricFields]] {
        let secondYear = secondYear
        let gross = revenue(granularity, nil)
        let second = sums(granularity, transactions.filter { secondYear.contains($0.id) }.map {
            (Self.dayOf($0.purchase), $0.currency, $0.amount)
        })
        return gross.mapValues { _ in [] }.reduce(into: [:]) { result, entry in
            let currency = entry.key
            result[currency] = gross[currency]!.indices.map { index in
                let total = Int64(gross[currency]![index].value!)
                let later = Int64(second[currency]?[index].value ?? 0)
                var fields = MetricFields(value: Double(roundedDivision((total - later) * 70 + later * 85, 100)))
                fields.revenue = total
                return fields
            }
        }
    }

    func refunds(_ granularity: MetricGranularity) -> [Label: [MetricFields]] {
        let periods = periods(granularity)
        let gross = revenue(granularity, nil)
        var series: [Label: [MetricFields]] = [:]
        for transaction in transactions {
            guard let revoked = transaction.revocation,
                let index = periods.firstIndex(where: { $0.contains(Self.dayOf(revoked)) })
            else { continue }
            let currency = transaction.currency
            if series[currency] == nil {
                series[currency] = periods.indices.map { index in
                    var fields = MetricFields(value: 0)
                    (fields.count, fields.forIssue, fields.prorated, fields.family) = (0, 0, 0, 0)
                    fields.revenue = Int64(gross[currency]?[index].value ?? 0)
                    return fields
                }
            }
            series[currency]![index].value! += Double(transaction.refunded)
            series[currency]![index].count! += 1
            if transaction.forIssue { series[currency]![index].forIssue! += 1 }
            if transaction.family {
                series[currency]![index].family! += 1
            } else if let share = transaction.percentage, share < 100_000 {
                series[currency]![index].prorated! += 1
            }
        }
        return series
    }

    /// Trials by the period they started in, read now.
    func trialConversion(_ granularity: MetricGranularity) -> [Label: [MetricFields]] {
        let periods = periods(granularity)
        var points = periods.map { _ in MetricFields(value: nil, started: 0, converted: 0, cancelled: 0, pending: 0) }
        for transactions in subscriptions.values {
            guard let trial = transactions.first(where: \.trial), let end = trial.end, end > trial.purchase,
                let index = periods.firstIndex(where: { $0.contains(Self.dayOf(trial.purchase)) })
            else { continue }
            points[index].started! += 1
            if transactions.contains(where: { $0.isPaid && $0.purchase > trial.purchase }) {
                points[index].converted! += 1
            } else if now < end {
                points[index].pending! += 1
            } else {
                points[index].cancelled! += 1
            }
        }
        for index in points.indices {
            let (converted, cancelled) = (points[index].converted!, points[index].cancelled!)
            points[index].value = converted + cancelled > 0 ? Double(converted) / Double(converted + cancelled) : nil
        }
        return ["": points]
    }

    func churn(_ granularity: MetricGranularity) -> [Label: [MetricFields]] {
        periods(granularity).reduce(into: ["": []]) { series, period in
            let before = Self.endOf(period.lowerBound - 1)
            let after = Self.endOf(period.upperBound)
            var active: Int64 = 0
            var churned: Int64 = 0
            for transactions in subscriptions.values where state(transactions, at: before)?.0 == .paid {
                active += 1
                if state(transactions, at: after)?.0 != .paid { churned += 1 }
            }
            var fields = MetricFields(value: active > 0 ? Double(churned) / Double(active) : nil)
            (fields.churned, fields.activeAtStart) = (churned, active)
            series[""]!.append(fields)
        }
    }

    // MARK: - Cohorts

    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// Months since January 1970 of an instant.
    static func month(_ instant: Int64) -> Int {
        let parts = calendar.dateComponents([.year, .month], from: Date(epochMilliseconds: instant))
        return (parts.year! - 1970) * 12 + parts.month! - 1
    }

    static func monthStart(_ month: Int) -> Int64 {
        calendar.date(from: DateComponents(year: 1970 + month / 12, month: month % 12 + 1, day: 1))!.epochMilliseconds
    }

    static func monthLabel(_ month: Int) -> String { String(format: "%04d-%02d", 1970 + month / 12, month % 12 + 1) }

    var cohortMonths: ClosedRange<Int> {
        Self.month(Int64(firstDay) * Self.day)...Self.month(Int64(lastDay) * Self.day)
    }

    /// Whether `month` is over now.
    func ended(_ month: Int) -> Bool { Self.monthStart(month + 1) <= now }

    func lifetimeValue() -> [CohortRow] {
        var sizes: [Int: Int64] = [:]
        var net: [Int: [String: [Int: Int64]]] = [:]
        for (customer, payment) in firstPayments {
            let cohort = Self.month(payment.purchase)
            sizes[cohort, default: 0] += 1
            // The customer's purchases less refunds, by month and currency.
            var own: [String: [Int: Int64]] = [:]
            for transaction in transactions where transaction.owner == customer && !transaction.family {
                own[transaction.currency, default: [:]][Self.month(transaction.purchase), default: 0] += transaction.amount
                if let revoked = transaction.revocation {
                    own[transaction.currency, default: [:]][Self.month(revoked), default: 0] -= transaction.refunded
                }
            }
            for (currency, months) in own {
                for (month, amount) in months where amount != 0 {
                    net[cohort, default: [:]][currency, default: [:]][max(0, month - cohort), default: 0] += amount
                }
            }
        }
        var rows: [CohortRow] = []
        for cohort in sizes.keys.sorted() where cohortMonths.contains(cohort) {
            let size = sizes[cohort]!
            for (currency, byOffset) in (net[cohort] ?? [:]).sorted(by: { $0.key < $1.key }) {
                var values: [Double] = []
                var total: Int64 = 0
                var offset = 0
                while ended(cohort + offset) {
                    total += byOffset[offset] ?? 0
                    values.append(Double(roundedDivision(total, size)))
                    offset += 1
                }
                rows.append(CohortRow(cohort: Self.monthLabel(cohort), size: size, currency: currency, values: values))
            }
        }
        return rows
    }

    func retention() -> [CohortRow] {
        var sizes: [Int: Int64] = [:]
        var retained: [Int: [Int: Int64]] = [:]
        for transactions in subscriptions.values {
            guard let first = transactions.first(where: { $0.isPaid && ($0.end ?? $0.purchase) > $0.purchase }) else { continue }
            let cohort = Self.month(first.purchase)
            sizes[cohort, default: 0] += 1
            var offset = 0
            while ended(cohort + offset) {
                let anniversary = Self.calendar.date(byAdding: .month, value: offset, to: Date(epochMilliseconds: first.purchase))!.epochMilliseconds
                if state(transactions, at: anniversary)?.0 == .paid { retained[cohort, default: [:]][offset, default: 0] += 1 }
                offset += 1
            }
        }
        return sizes.keys.sorted().filter { cohortMonths.contains($0) }.map { cohort in
            var values: [Double] = []
            var offset = 0
            while ended(cohort + offset) {
                values.append(Double(retained[cohort]?[offset] ?? 0) / Double(sizes[cohort]!))
                offset += 1
            }
            return CohortRow(cohort: Self.monthLabel(cohort), size: sizes[cohort]!, currency: nil, values: values)
        }
    }
}

/// One row of a cohort table.
struct CohortRow: Equatable {
    var cohort: String
    var size: Int64
    var currency: String?
    var values: [Double]
}

/// The fields of a metric's point that a comparison reads.
struct MetricFields: Equatable {
    var value: Double?
    var started: Int64?
    var converted: Int64?
    var cancelled: Int64?
    var pending: Int64?
    var churned: Int64?
    var activeAtStart: Int64?
    var count: Int64?
    var revenue: Int64?
    var forIssue: Int64?
    var prorated: Int64?
    var family: Int64?

    init(
        value: Double?, started: Int64? = nil, converted: Int64? = nil, cancelled: Int64? = nil, pending: Int64? = nil
    ) {
        self.value = value
        self.started = started
        self.converted = converted
        self.cancelled = cancelled
        self.pending = pending
    }

    init(_ point: MetricPoint) {
        value = point.value
        started = point.started
        converted = point.converted
        cancelled = point.cancelled
        pending = point.pending
        churned = point.churned
        activeAtStart = point.activeAtStart
        count = point.count
        revenue = point.revenue
        forIssue = point.forIssue
        prorated = point.prorated
        family = point.family
    }

    /// Each field by name.
    var named: [(String, Double?)] {
        [
            ("value", value), ("started", started.map(Double.init)), ("converted", converted.map(Double.init)),
            ("cancelled", cancelled.map(Double.init)), ("pending", pending.map(Double.init)),
            ("churned", churned.map(Double.init)), ("activeAtStart", activeAtStart.map(Double.init)),
            ("count", count.map(Double.init)), ("revenue", revenue.map(Double.init)),
            ("forIssue", forIssue.map(Double.init)), ("prorated", prorated.map(Double.init)),
            ("family", family.map(Double.init)),
        ]
    }
}
