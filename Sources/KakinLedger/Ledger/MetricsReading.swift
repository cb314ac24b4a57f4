import AppStoreModels
public import Foundation
public import KakinCore

/// A row of the subscription metrics' daily rollup: what an app's transactions of one product,
/// storefront, currency and store add up to on one UTC day (see ``MetricColumn``).
public struct MetricDay: Hashable, Sendable {
    /// The day, as days since 1970-01-01 (UTC).
    public var day: Int
    /// The product.
    public var productID: String
    /// The storefront (ISO 3166-1 alpha-3) the transactions were bought in; empty when not known.
    public var storefront: String
    /// The currency of the amounts; empty when the price is not known.
    public var currency: String
    /// Where the customers paid: the App Store, or the app's web checkout.
    public var store: PurchaseStore
    /// The figures.
    public var counts: MetricCounts

    /// Creates a row from its parts.
    public init(
        day: Int, productID: String, storefront: String, currency: String, store: PurchaseStore = .appStore,
        counts: MetricCounts
    ) {
        self.day = day
        self.productID = productID
        self.storefront = storefront
        self.currency = currency
        self.store = store
        self.counts = counts
    }
}

/// A row of the monthly cohorts: a cohort month, a month offset from it, and a value.
public struct MetricCohortValue: Hashable, Sendable {
    /// What the value counts.
    public enum Kind: String, Sendable, CaseIterable {
        /// Subscriptions whose first paid transaction fell in the cohort's month (offset 0).
        case retentionSize = "retention_size"
        /// Of those, the ones active and paid `offset` months after their first paid transaction.
        case retained
        /// Customers whose first paid transaction fell in the cohort's month (offset 0).
        case customers
        /// The net revenue (purchases less refunds, milliunits of ``MetricCohortValue/currency``)
        /// those customers brought in the calendar month `offset` months after the cohort's.
        case customerRevenue = "customer_revenue"
    }

    /// What the value counts.
    public var kind: Kind
    /// The cohort's month, as months since January 1970 (UTC).
    public var cohort: Int
    /// Months after the cohort's.
    public var offset: Int
    /// The currency of an amount; empty for counts.
    public var currency: String
    /// The value.
    public var value: Int64

    /// Creates a row from its parts.
    public init(kind: Kind, cohort: Int, offset: Int, currency: String, value: Int64) {
        self.kind = kind
        self.cohort = cohort
        self.offset = offset
        self.currency = currency
        self.value = value
    }
}

/// What the subscription metrics of an app's environment read from the rollups for a range of
/// days: see ``LedgerStore/metrics(bundleID:environment:days:now:)``.
public struct MetricsReading: Hashable, Sendable {
    /// Per product, storefront, currency and store, the sums of every day before the range (their
    /// `day` is the day before it): what the counts of active subscriptions and the monthly
    /// recurring revenue start from. Sums that are all zero are left out.
    public var before: [MetricDay]
    /// The rows of the range's days; days with nothing recorded (or whose figures came back to
    /// zero) have none.
    public var days: [MetricDay]
    /// Every cohort row of the app's environment whose value is not zero.
    public var cohorts: [MetricCohortValue]
    /// Free trials started in the range that have neither converted nor ended at `now`, by the
    /// day they started, product, storefront and store.
    public var pendingTrials: [MetricCount]

    /// Creates a reading from its parts.
    public init(before: [MetricDay], days: [MetricDay], cohorts: [MetricCohortValue], pendingTrials: [MetricCount]) {
        self.before = before
        self.days = days
        self.cohorts = cohorts
        self.pendingTrials = pendingTrials
    }
}

/// A period of time for churn: `[start, end)`.
public struct MetricPeriod: Hashable, Sendable {
    /// The period's first instant.
    public var start: Date
    /// The instant after its last.
    public var end: Date

    /// Creates a period; `end` must be after `start`.
    public init(start: Date, end: Date) {
        self.start = start
        self.end = end
    }
}

/// A number of subscriptions of one product, storefront and store (on one day, where it says).
public struct MetricCount: Hashable, Sendable {
    /// The day (days since 1970-01-01, UTC), where the count is for one.
    public var day: Int?
    /// The product.
    public var productID: String
    /// The storefront; empty when not known.
    public var storefront: String
    /// Where the customers paid.
    public var store: PurchaseStore
    /// How many.
    public var count: Int

    /// Creates a count from its parts.
    public init(day: Int? = nil, productID: String, storefront: String, store: PurchaseStore = .appStore, count: Int) {
        self.day = day
        self.productID = productID
        self.storefront = storefront
        self.store = store
        self.count = count
    }
}
