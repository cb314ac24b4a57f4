import Foundation
import KakinCore

/// A figure the ledger adds up per UTC day in `metric_days` (see <doc:Metrics> in the server's
/// documentation for what each one counts). The raw value is the column's name.
public enum MetricColumn: String, CaseIterable, Sendable {
    /// Transactions purchased that day (renewals included, family shares included).
    case purchases
    /// Price × quantity of the purchases that have a price, family shares excluded (milliunits).
    case revenue
    /// The part of ``revenue`` from subscription transactions bought after a year of paid service.
    case revenueSecondYear = "revenue_second_year"
    /// Transactions whose revocation date falls that day.
    case refunds
    /// What those revocations took back: price × quantity × the share refunded (milliunits).
    case refunded
    /// Refunds for a problem with the app (`revocationReason` 1).
    case refundsForIssue = "refunds_for_issue"
    /// Refunds of a share of a transaction (`REFUND_PRORATED`).
    case refundsProrated = "refunds_prorated"
    /// Family shares whose access ended (`FAMILY_REVOKE`).
    case refundsFamily = "refunds_family"
    /// Paid subscription periods that start that day (an uninterrupted renewal adds a start and an end on one day).
    case paidStarts = "paid_starts"
    /// Paid subscription periods that end that day.
    case paidEnds = "paid_ends"
    /// Free-trial periods that start that day.
    case trialStarts = "trial_starts"
    /// Free-trial periods that end that day.
    case trialEnds = "trial_ends"
    /// Family-shared periods that start that day.
    case familyStarts = "family_starts"
    /// Family-shared periods that end that day.
    case familyEnds = "family_ends"
    /// The monthly recurring revenue of the paid periods that start that day (milliunits).
    case mrrStarts = "mrr_starts"
    /// The monthly recurring revenue of the paid periods that end that day (milliunits).
    case mrrEnds = "mrr_ends"
    /// Subscriptions whose free trial was bought that day.
    case trialsStarted = "trials_started"
    /// Of those, the ones that went on to a paid transaction (counted on the trial's day).
    case trialsConverted = "trials_converted"
    /// Customers whose first paid transaction was bought that day.
    case newCustomers = "new_customers"

    static let index: [MetricColumn: Int] = Dictionary(
        uniqueKeysWithValues: allCases.enumerated().map { ($0.element, $0.offset) })
}

/// One value per ``MetricColumn``: a day's figures, or what a change adds to them.
public struct MetricCounts: Hashable, Sendable {
    var values: [Int64]

    /// All zero.
    public init() {
        values = Array(repeating: 0, count: MetricColumn.allCases.count)
    }

    init(values: [Int64]) {
        precondition(values.count == MetricColumn.allCases.count)
        self.values = values
    }

    /// The value of `column`.
    public subscript(_ column: MetricColumn) -> Int64 {
        get { values[MetricColumn.index[column]!] }
        set { values[MetricColumn.index[column]!] = newValue }
    }

    /// Whether every value is zero.
    public var isZero: Bool { values.allSatisfy { $0 == 0 } }

    /// The sums of each value of the two.
    public func adding(_ other: Self) -> Self { self + other }

    static func + (lhs: Self, rhs: Self) -> Self {
        Self(values: zip(lhs.values, rhs.values).map { $0 + $1 })
    }

    static prefix func - (value: Self) -> Self {
        Self(values: value.values.map { -$0 })
    }
}

/// The key of a `metric_days` row: an app's environment, UTC day, product, storefront,
/// currency (both empty when not known) and store (``PurchaseStore``'s raw value).
struct MetricDayKey: Hashable, Sendable, Comparable {
    var bundleID: String
    var environment: String
    var day: Int
    var productID: String
    var storefront: String
    var currency: String
    var store: String = PurchaseStore.appStore.rawValue

    static func < (lhs: Self, rhs: Self) -> Bool {
        let (left, right) = (
            (lhs.bundleID, lhs.environment, lhs.day, lhs.productID, lhs.storefront),
            (rhs.bundleID, rhs.environment, rhs.day, rhs.productID, rhs.storefront)
        )
        return left != right ? left < right : (lhs.currency, lhs.store) < (rhs.currency, rhs.store)
    }
}

/// The kinds of rows in `metric_cohorts`.
enum MetricCohortKind: String, Sendable {
    /// Subscriptions whose first paid transaction fell in the cohort's month (offset 0).
    case retentionSize = "retention_size"
    /// Of those, the ones active and paid `offset` months after their first paid transaction.
    case retained
    /// Customers whose first paid transaction fell in the cohort's month (offset 0).
    case customers
    /// The net revenue those customers brought in the month `offset` months after the cohort's.
    case customerRevenue = "customer_revenue"
}

/// The key of a `metric_cohorts` row: a cohort month (months since January 1970, UTC) and a
/// month offset from it.
struct MetricCohortKey: Hashable, Sendable, Comparable {
    var bundleID: String
    var environment: String
    var kind: String
    var cohort: Int
    var offset: Int
    var currency: String

    static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.bundleID, lhs.environment, lhs.kind, lhs.cohort, lhs.offset, lhs.currency)
            < (rhs.bundleID, rhs.environment, rhs.kind, rhs.cohort, rhs.offset, rhs.currency)
    }
}

/// What a subscription (or a customer) adds to the rollups. The ledger stores the last one it
/// applied, and applies the difference when the subscription changes, so a change read twice
/// adds nothing.
struct MetricContributions: Hashable, Sendable {
    var days: [MetricDayKey: MetricCounts] = [:]
    var cohorts: [MetricCohortKey: Int64] = [:]

    var isEmpty: Bool { days.isEmpty && cohorts.isEmpty }

    mutating func add(_ column: MetricColumn, _ amount: Int64, to key: MetricDayKey) {
        guard amount != 0 else { return }
        var counts = days[key] ?? MetricCounts()
        counts[column] += amount
        days[key] = counts.isZero ? nil : counts
    }

    mutating func add(_ amount: Int64, to key: MetricCohortKey) {
        guard amount != 0 else { return }
        let sum = cohorts[key, default: 0] + amount
        cohorts[key] = sum == 0 ? nil : sum
    }

    /// What moving from `old` to `self` adds.
    func difference(from old: MetricContributions) -> MetricContributions {
        var change = MetricContributions()
        for (key, counts) in old.days { change.merge(-counts, into: key) }
        for (key, counts) in days { change.merge(counts, into: key) }
        for (key, value) in old.cohorts { change.add(-value, to: key) }
        for (key, value) in cohorts { change.add(value, to: key) }
        return change
    }

    mutating func merge(_ counts: MetricCounts, into key: MetricDayKey) {
        let sum = (days[key] ?? MetricCounts()) + counts
        days[key] = sum.isZero ? nil : sum
    }

    mutating func merge(_ other: MetricContributions) {
        for (key, counts) in other.days { merge(counts, into: key) }
        for (key, value) in other.cohorts { add(value, to: key) }
    }

    var sortedDays: [(key: MetricDayKey, counts: MetricCounts)] {
        days.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    var sortedCohorts: [(key: MetricCohortKey, value: Int64)] {
        cohorts.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}

extension MetricContributions: Codable {
    private enum CodingKeys: String, CodingKey { case days = "d", cohorts = "c" }

    /// A day's row as stored: environment, day, product, storefront, currency, store, then the
    /// values. The store is left out when it is the App Store (as in every row stored before the
    /// ledger kept it).
    private struct StoredDay: Codable {
        var environment: String
        var day: Int
        var productID: String
        var storefront: String
        var currency: String
        var store: String?
        var values: [Int64]

        enum CodingKeys: String, CodingKey {
            case environment = "e", day = "d", productID = "p", storefront = "s", currency = "c", store = "t"
            case values = "v"
        }
    }

    private struct StoredCohort: Codable {
        var environment: String
        var kind: String
        var cohort: Int
        var offset: Int
        var currency: String
        var value: Int64

        enum CodingKeys: String, CodingKey {
            case environment = "e", kind = "k", cohort = "m", offset = "o", currency = "c", value = "v"
        }
    }

    /// Decodes stored contributions of an app's subscription or customer.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let bundleID = decoder.userInfo[.metricBundleID] as? String ?? ""
        for day in try container.decode([StoredDay].self, forKey: .days) {
            guard day.values.count == MetricColumn.allCases.count else {
                throw DecodingError.dataCorruptedError(
                    forKey: .days, in: container, debugDescription: "a day has \(day.values.count) values")
            }
            days[
                MetricDayKey(
                    bundleID: bundleID, environment: day.environment, day: day.day, productID: day.productID,
                    storefront: day.storefront, currency: day.currency,
                    store: day.store ?? PurchaseStore.appStore.rawValue)] = MetricCounts(values: day.values)
        }
        for cohort in try container.decode([StoredCohort].self, forKey: .cohorts) {
            cohorts[
                MetricCohortKey(
                    bundleID: bundleID, environment: cohort.environment, kind: cohort.kind, cohort: cohort.cohort,
                    offset: cohort.offset, currency: cohort.currency)] = cohort.value
        }
    }

    /// Encodes without the app (the row that stores them names it), in key order.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(
            sortedDays.map {
                StoredDay(
                    environment: $0.key.environment, day: $0.key.day, productID: $0.key.productID,
                    storefront: $0.key.storefront, currency: $0.key.currency,
                    store: $0.key.store == PurchaseStore.appStore.rawValue ? nil : $0.key.store, values: $0.counts.values)
            }, forKey: .days)
        try container.encode(
            sortedCohorts.map {
                StoredCohort(
                    environment: $0.key.environment, kind: $0.key.kind, cohort: $0.key.cohort, offset: $0.key.offset,
                    currency: $0.key.currency, value: $0.value)
            }, forKey: .cohorts)
    }
}

extension CodingUserInfoKey {
    /// The app whose stored metric contributions are decoded.
    static let metricBundleID = CodingUserInfoKey(rawValue: "kakin.metricBundleID")!
}
