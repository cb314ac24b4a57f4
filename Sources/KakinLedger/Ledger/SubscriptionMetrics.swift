import AppStoreModels
import Foundation
import KakinCore

/// A transaction as the subscription metrics read it: its row, and what Apple signed about its
/// storefront, ownership and offer (read from the stored JWS without verifying it again: the
/// ledger stores only JWS it verified when they arrived).
struct MetricTransaction: Hashable, Sendable {
    var transactionID: String
    var productID: String
    var isSubscription: Bool
    var quantity: Int64
    var purchaseDate: Int64
    var expiresDate: Int64?
    var revocationDate: Int64?
    var revocationReason: Int64?
    var revocationPercentage: Int64?
    var price: Int64?
    var currency: String?
    var environment: String
    /// Where the customer paid (``PurchaseStore``'s raw value).
    var store: String
    var appUserID: String?
    /// The storefront (ISO 3166-1 alpha-3) it was bought in; empty when not known.
    var storefront: String
    var familyShared: Bool
    var freeTrial: Bool

    /// The transaction `row` holds; `signed`, when given, is what its signed transaction holds,
    /// read when it arrived (otherwise it is read from the row's JWS).
    init(_ row: TransactionRow, signed known: SignedMetricFields? = nil) {
        let signed = known ?? row.signedTransaction.flatMap(SignedMetricFields.init(jws:))
        self.init(
            transactionID: row.transactionID, productID: row.productID,
            isSubscription: row.productType == ProductType.autoRenewableSubscription.rawValue, quantity: row.quantity,
            purchaseDate: row.purchaseDate, expiresDate: row.expiresDate, revocationDate: row.revocationDate,
            revocationReason: row.revocationReason, revocationPercentage: row.revocationPercentage, price: row.price,
            currency: row.currency, environment: row.environment, store: row.store, appUserID: row.appUserID,
            storefront: signed?.storefront ?? "", familyShared: signed?.inAppOwnershipType == "FAMILY_SHARED",
            freeTrial: signed.map { $0.offerDiscountType == OfferDiscountType.freeTrial.rawValue }
                ?? (row.periodType == SubscriptionPeriodType.trial.rawValue))
    }

    init(
        transactionID: String, productID: String, isSubscription: Bool, quantity: Int64 = 1, purchaseDate: Int64,
        expiresDate: Int64? = nil, revocationDate: Int64? = nil, revocationReason: Int64? = nil,
        revocationPercentage: Int64? = nil, price: Int64? = nil, currency: String? = nil, environment: String,
        store: String = PurchaseStore.appStore.rawValue, appUserID: String? = nil, storefront: String = "",
        familyShared: Bool = false, freeTrial: Bool = false
    ) {
        self.transactionID = transactionID
        self.productID = productID
        self.isSubscription = isSubscription
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.revocationPercentage = revocationPercentage
        self.price = price
        self.currency = currency
        self.environment = environment
        self.store = store
        self.appUserID = appUserID
        self.storefront = storefront
        self.familyShared = familyShared
        self.freeTrial = freeTrial
    }

    /// Paid: neither a free trial nor a family share.
    var isPaid: Bool { !freeTrial && !familyShared }

    /// What it cost, when known and charged to this customer.
    var amount: Int64? {
        guard !familyShared, let price else { return nil }
        return price * quantity
    }

    /// What its revocation took back: the share refunded of ``amount``, to the nearest milliunit.
    var refundedAmount: Int64? {
        guard revocationDate != nil, let amount else { return nil }
        guard let share = revocationPercentage, share < RecordedTransaction.wholeShare else { return amount }
        return MetricMath.divide(amount * share, by: Int64(RecordedTransaction.wholeShare))
    }

    /// When it stops giving access: its expiry, or its revocation when earlier.
    var end: Int64? {
        guard let expiresDate else { return nil }
        return revocationDate.map { min($0, expiresDate) } ?? expiresDate
    }

    /// Its price normalized to a month: a period of about a week (or a few weeks) × 52 / 12 per
    /// week, otherwise divided by its length in months, to the nearest milliunit.
    var monthlyAmount: Int64? {
        guard let amount, let expiresDate, expiresDate > purchaseDate else { return nil }
        let days = Double(expiresDate - purchaseDate) / Double(DailyFigures.dayLength)
        if days < 27 {
            let weeks = max(1, Int64((days / 7).rounded()))
            return MetricMath.divide(amount * 52, by: 12 * weeks)
        }
        let months = max(1, Int64((days / MetricMath.averageMonthDays).rounded()))
        return MetricMath.divide(amount, by: months)
    }

    var currencyKey: String { currency ?? "" }
}

/// The fields of a signed transaction's payload the metrics read.
struct SignedMetricFields: Decodable, Hashable, Sendable {
    var storefront: String?
    var inAppOwnershipType: String?
    var offerDiscountType: String?

    /// The fields a verified transaction carries, `nil` when it carries none of them (its fields
    /// were not read when it arrived: ``RecordedTransaction/storefront``).
    init?(_ transaction: RecordedTransaction) {
        guard transaction.storefront != nil || transaction.inAppOwnershipType != nil
            || transaction.offerDiscountType != nil
        else { return nil }
        storefront = transaction.storefront
        inAppOwnershipType = transaction.inAppOwnershipType?.rawValue
        offerDiscountType = transaction.offerDiscountType?.rawValue
    }

    /// The fields signed in `jws`; `nil` when its payload cannot be read.
    init?(jws: String) {
        guard let data = JWSPayloadBytes.decode(jws),
            let decoded = try? JSONDecoder().decode(SignedMetricFields.self, from: data)
        else { return nil }
        self = decoded
    }
}

/// The payload bytes of a compact JWS (its second, base64url part), or `nil`.
enum JWSPayloadBytes {
    /// Reads the UTF-8 bytes as they are: the segments are ASCII, and a signed transaction is a few
    /// kilobytes, read for every transaction the metrics job works out again.
    static func decode(_ jws: String) -> Data? {
        let dot = UInt8(ascii: ".")
        let utf8 = jws.utf8
        guard let first = utf8.firstIndex(of: dot) else { return nil }
        let rest = utf8[utf8.index(after: first)...]
        guard let second = rest.firstIndex(of: dot), !rest[rest.index(after: second)...].contains(dot) else {
            return nil
        }
        var standard: [UInt8] = []
        standard.reserveCapacity(rest.distance(from: rest.startIndex, to: second) + 3)
        for byte in rest[..<second] {
            switch byte {
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            default: standard.append(byte)
            }
        }
        standard.append(contentsOf: repeatElement(UInt8(ascii: "="), count: (4 - standard.count % 4) % 4))
        return Data(base64Encoded: Data(standard))
    }
}

/// The arithmetic of the metrics: rounding, UTC days and calendar months.
package enum MetricMath {
    /// The mean length of a Gregorian month in days.
    package static let averageMonthDays = 30.436875
    /// Sixty days: a gap in paid service up to this long keeps the count of a year of service.
    package static let serviceGap: Int64 = 60 * DailyFigures.dayLength
    /// A year of paid service.
    package static let serviceYear: Int64 = 365 * DailyFigures.dayLength

    /// `value / divisor` rounded to the nearest integer (halves away from zero); `divisor` > 0.
    package static func divide(_ value: Int64, by divisor: Int64) -> Int64 {
        value >= 0 ? (value + divisor / 2) / divisor : -((-value + divisor / 2) / divisor)
    }

    package static func day(_ instant: Int64) -> Int {
        Int(DailyFigures.floorDivide(instant, DailyFigures.dayLength))
    }

    package static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// The month of `instant`, as months since January 1970 (UTC).
    package static func month(_ instant: Int64) -> Int {
        let parts = calendar.dateComponents([.year, .month], from: LedgerTime.date(instant))
        return (parts.year! - 1970) * 12 + parts.month! - 1
    }

    /// The month of the day numbered `day`.
    package static func month(ofDay day: Int) -> Int {
        month(Int64(day) * DailyFigures.dayLength)
    }

    /// The first instant of the month numbered `month`.
    package static func start(ofMonth month: Int) -> Int64 {
        let year = 1970 + Int(DailyFigures.floorDivide(Int64(month), 12))
        let date = calendar.date(
            from: DateComponents(year: year, month: month - (year - 1970) * 12 + 1, day: 1))!
        return LedgerTime.milliseconds(date)
    }

    /// `instant` moved `months` calendar months later, on the same day of the month or the last
    /// day of a shorter month.
    package static func adding(months: Int, to instant: Int64) -> Int64 {
        LedgerTime.milliseconds(calendar.date(byAdding: .month, value: months, to: LedgerTime.date(instant))!)
    }
}

/// A period during which a subscription was active and paid without a break (`paid`), or a
/// subscription's free trial (`trial`): the rows of `metric_runs`, which churn and trial
/// conversion read.
struct MetricRun: Hashable, Sendable {
    enum Kind: String, Sendable { case paid, trial }
    var kind: Kind
    var start: Int64
    var end: Int64
    /// The product, storefront and store of the transaction that covers its end (a trial's own).
    var productID: String
    var storefront: String
    var store: String = PurchaseStore.appStore.rawValue
    /// For a trial: whether a paid transaction followed it.
    var converted: Bool = false
}

/// A grace period Apple reported for a subscription: when it ends, and the expiry of the period
/// whose renewal failed (from which it runs), when the report named it.
struct MetricGrace: Hashable, Sendable {
    var expiresAt: Int64
    var periodExpiresAt: Int64?
}

/// The first paid transaction of a subscription or other purchase: what makes its owner a paying
/// customer.
struct MetricFirstPayment: Codable, Hashable, Sendable {
    var instant: Int64
    var productID: String
    var storefront: String
    var currency: String
    /// Where it was paid (``PurchaseStore``'s raw value).
    var store: String = PurchaseStore.appStore.rawValue

    enum CodingKeys: String, CodingKey { case instant, productID, storefront, currency, store }

    init(
        instant: Int64, productID: String, storefront: String, currency: String,
        store: String = PurchaseStore.appStore.rawValue
    ) {
        (self.instant, self.productID, self.storefront, self.currency, self.store) =
            (instant, productID, storefront, currency, store)
    }

    /// Decodes a first payment as stored; one stored before the ledger kept the store is the App
    /// Store's.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        instant = try container.decode(Int64.self, forKey: .instant)
        productID = try container.decode(String.self, forKey: .productID)
        storefront = try container.decode(String.self, forKey: .storefront)
        currency = try container.decode(String.self, forKey: .currency)
        store = try container.decodeIfPresent(String.self, forKey: .store) ?? PurchaseStore.appStore.rawValue
    }

    /// Encodes it, leaving the store out when it is the App Store's (as stored before).
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(instant, forKey: .instant)
        try container.encode(productID, forKey: .productID)
        try container.encode(storefront, forKey: .storefront)
        try container.encode(currency, forKey: .currency)
        if store != PurchaseStore.appStore.rawValue { try container.encode(store, forKey: .store) }
    }
}

/// What one subscription (or one purchase of another kind: every original transaction ID) adds
/// to the metrics, worked out from all its transactions and the grace periods Apple reported.
struct MetricUnit: Hashable, Sendable {
    var contributions = MetricContributions()
    var runs: [MetricRun] = []
    var environment = ""
    /// Whose it is: the owner of its latest transaction, or its original transaction ID (prefixed
    /// with `#`) while nobody owns it.
    var customer = ""
    var firstPayment: MetricFirstPayment?
    /// Net revenue by month (months since January 1970) and currency: purchases less refunds.
    var monthlyNet: [MonthlyNet] = []

    struct MonthlyNet: Codable, Hashable, Sendable, Comparable {
        var month: Int
        var currency: String
        var amount: Int64

        static func < (lhs: Self, rhs: Self) -> Bool { (lhs.month, lhs.currency) < (rhs.month, rhs.currency) }
    }

    /// A covering period: `[start, end)` during which `transaction` is the one that covers the
    /// subscription (`grace` when Apple was retrying its renewal in a grace period).
    struct Segment: Hashable {
        var start: Int64
        var end: Int64
        var transaction: Int
        var grace: Bool
    }

    /// Works out a subscription's figures from its transactions and the grace period expiries
    /// recorded for it. `transactions` must all belong to one original transaction ID of one app.
    init(
        bundleID: String, originalTransactionID: String, transactions unsorted: [MetricTransaction],
        graceExpiries: [MetricGrace]
    ) {
        let transactions = unsorted.sorted { ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID) }
        guard let last = transactions.last else { return }
        environment = last.environment
        customer = last.appUserID ?? "#" + originalTransactionID
        func key(_ instant: Int64, _ transaction: MetricTransaction) -> MetricDayKey {
            MetricDayKey(
                bundleID: bundleID, environment: transaction.environment, day: MetricMath.day(instant),
                productID: transaction.productID, storefront: transaction.storefront,
                currency: transaction.currencyKey, store: transaction.store)
        }
        let secondYear = Self.secondYearTransactions(transactions)
        var net: [MonthlyNet: Int64] = [:]
        for transaction in transactions {
            let bought = key(transaction.purchaseDate, transaction)
            contributions.add(.purchases, 1, to: bought)
            if let amount = transaction.amount {
                contributions.add(.revenue, amount, to: bought)
                if secondYear.contains(transaction.transactionID) {
                    contributions.add(.revenueSecondYear, amount, to: bought)
                }
                net[MonthlyNet(month: MetricMath.month(transaction.purchaseDate), currency: transaction.currencyKey, amount: 0), default: 0] += amount
            }
            if let revoked = transaction.revocationDate {
                let refund = key(revoked, transaction)
                contributions.add(.refunds, 1, to: refund)
                if let refunded = transaction.refundedAmount {
                    contributions.add(.refunded, refunded, to: refund)
                    net[MonthlyNet(month: MetricMath.month(revoked), currency: transaction.currencyKey, amount: 0), default: 0] -= refunded
                }
                if transaction.revocationReason == 1 { contributions.add(.refundsForIssue, 1, to: refund) }
                if transaction.familyShared {
                    contributions.add(.refundsFamily, 1, to: refund)
                } else if let share = transaction.revocationPercentage, share < RecordedTransaction.wholeShare {
                    contributions.add(.refundsProrated, 1, to: refund)
                }
            }
            if firstPayment == nil, transaction.isPaid, (transaction.price ?? 0) > 0 {
                firstPayment = MetricFirstPayment(
                    instant: transaction.purchaseDate, productID: transaction.productID,
                    storefront: transaction.storefront, currency: transaction.currencyKey, store: transaction.store)
            }
        }
        monthlyNet = net.filter { $0.value != 0 }.map {
            MonthlyNet(month: $0.key.month, currency: $0.key.currency, amount: $0.value)
        }.sorted()

        let subscription = transactions.filter(\.isSubscription)
        guard !subscription.isEmpty else { return }
        let segments = Self.segments(subscription, graceExpiries: graceExpiries)
        for segment in segments {
            let transaction = subscription[segment.transaction]
            let (starts, ends): (MetricColumn, MetricColumn) =
                transaction.familyShared
                ? (.familyStarts, .familyEnds) : transaction.freeTrial ? (.trialStarts, .trialEnds) : (.paidStarts, .paidEnds)
            contributions.add(starts, 1, to: key(segment.start, transaction))
            contributions.add(ends, 1, to: key(segment.end, transaction))
            if transaction.isPaid, let monthly = transaction.monthlyAmount {
                contributions.add(.mrrStarts, monthly, to: key(segment.start, transaction))
                contributions.add(.mrrEnds, monthly, to: key(segment.end, transaction))
            }
            if transaction.isPaid {
                if let run = runs.last, run.end == segment.start {
                    runs[runs.count - 1].end = segment.end
                    runs[runs.count - 1].productID = transaction.productID
                    runs[runs.count - 1].storefront = transaction.storefront
                    runs[runs.count - 1].store = transaction.store
                } else {
                    runs.append(
                        MetricRun(
                            kind: .paid, start: segment.start, end: segment.end, productID: transaction.productID,
                            storefront: transaction.storefront, store: transaction.store))
                }
            }
        }
        if let trial = subscription.first(where: \.freeTrial), let trialEnd = trial.end, trialEnd > trial.purchaseDate {
            let converted = subscription.contains { $0.isPaid && $0.purchaseDate > trial.purchaseDate }
            let started = key(trial.purchaseDate, trial)
            contributions.add(.trialsStarted, 1, to: started)
            if converted { contributions.add(.trialsConverted, 1, to: started) }
            runs.append(
                MetricRun(
                    kind: .trial, start: trial.purchaseDate, end: trialEnd, productID: trial.productID,
                    storefront: trial.storefront, store: trial.store, converted: converted))
        }
        let paidRuns = runs.filter { $0.kind == .paid }
        if let first = subscription.first(where: { $0.isPaid && ($0.end ?? $0.purchaseDate) > $0.purchaseDate }),
            let lastEnd = paidRuns.last?.end
        {
            let cohort = MetricMath.month(first.purchaseDate)
            func cohortKey(_ kind: MetricCohortKind, _ offset: Int) -> MetricCohortKey {
                MetricCohortKey(
                    bundleID: bundleID, environment: environment, kind: kind.rawValue, cohort: cohort, offset: offset,
                    currency: "")
            }
            contributions.add(1, to: cohortKey(.retentionSize, 0))
            var offset = 0
            while true {
                let anniversary = MetricMath.adding(months: offset, to: first.purchaseDate)
                guard anniversary < lastEnd else { break }
                if paidRuns.contains(where: { $0.start <= anniversary && anniversary < $0.end }) {
                    contributions.add(1, to: cohortKey(.retained, offset))
                }
                offset += 1
            }
        }
    }

    /// The covering periods of a subscription's transactions, in order: at each instant the
    /// transaction purchased last among those covering it; after a transaction that expired
    /// (not revoked) with nothing covering next, the grace period Apple reported for it, until
    /// its expiry or the next transaction, whichever comes first. A grace period belongs to the
    /// period whose expiry its report named; one reported without it (kept before the ledger
    /// recorded it) is taken for a period that expired less than 60 days before it ends.
    static func segments(_ transactions: [MetricTransaction], graceExpiries: [MetricGrace]) -> [Segment] {
        var bounds = Set<Int64>()
        for transaction in transactions {
            guard let end = transaction.end, end > transaction.purchaseDate else { continue }
            bounds.insert(transaction.purchaseDate)
            bounds.insert(end)
        }
        let points = bounds.sorted()
        var segments: [Segment] = []
        for (start, end) in zip(points, points.dropFirst()) {
            // The transactions are in purchase order: the last one covering the piece covers it.
            guard
                let covering = transactions.indices.last(where: {
                    transactions[$0].purchaseDate <= start && (transactions[$0].end ?? start) >= end
                })
            else { continue }
            if let previous = segments.last, previous.transaction == covering, previous.end == start {
                segments[segments.count - 1].end = end
            } else {
                segments.append(Segment(start: start, end: end, transaction: covering, grace: false))
            }
        }
        var withGrace: [Segment] = []
        for (index, segment) in segments.enumerated() {
            withGrace.append(segment)
            let transaction = transactions[segment.transaction]
            guard transaction.revocationDate == nil || transaction.revocationDate! >= transaction.expiresDate!,
                segment.end == transaction.expiresDate
            else { continue }
            let next = index + 1 < segments.count ? segments[index + 1].start : Int64.max
            let end = segment.end
            let named = graceExpiries.filter { $0.periodExpiresAt == end && $0.expiresAt > end }.map(\.expiresAt)
            let unnamed = graceExpiries.filter {
                $0.periodExpiresAt == nil && $0.expiresAt > end && $0.expiresAt - end <= MetricMath.serviceGap
            }.map(\.expiresAt)
            guard next > end, let grace = named.max() ?? unnamed.min() else { continue }
            withGrace.append(Segment(start: segment.end, end: min(grace, next), transaction: segment.transaction, grace: true))
        }
        return withGrace
    }

    /// The paid subscription transactions bought after a year of paid service: the time covered
    /// by paid transactions before each adds up to 365 days or more, a gap over 60 days starting
    /// the count again.
    static func secondYearTransactions(_ transactions: [MetricTransaction]) -> Set<String> {
        var found = Set<String>()
        var served: Int64 = 0
        var coveredUntil: Int64?
        for transaction in transactions where transaction.isSubscription && transaction.isPaid {
            guard let end = transaction.end else { continue }
            if let covered = coveredUntil, transaction.purchaseDate - covered > MetricMath.serviceGap { served = 0 }
            if served >= MetricMath.serviceYear { found.insert(transaction.transactionID) }
            let from = max(transaction.purchaseDate, coveredUntil ?? transaction.purchaseDate)
            served += max(0, end - from)
            coveredUntil = max(coveredUntil ?? end, end)
        }
        return found
    }
}

/// What makes a customer a paying one: their first paid transaction (the earliest of their
/// purchases' first payments) and the purchase it belongs to. The ledger keeps it per customer in
/// `metric_customers`; the customer counts as new on its day, and their cohort is its month.
struct MetricCustomerState: Codable, Hashable, Sendable {
    var first: MetricFirstPayment
    /// The original transaction ID of the purchase it belongs to.
    var purchase: String

    enum CodingKeys: String, CodingKey { case first = "f", purchase = "p" }

    /// The earlier of two, by instant and then purchase.
    static func earliest(_ lhs: Self?, _ rhs: Self?) -> Self? {
        guard let lhs else { return rhs }
        guard let rhs else { return lhs }
        return (rhs.first.instant, rhs.purchase) < (lhs.first.instant, lhs.purchase) ? rhs : lhs
    }

    var cohort: Int { MetricMath.month(first.instant) }

    /// A new paying customer on the day of the first payment, and one more customer in the cohort.
    func base(bundleID: String, environment: String) -> MetricContributions {
        var contributions = MetricContributions()
        contributions.add(
            .newCustomers, 1,
            to: MetricDayKey(
                bundleID: bundleID, environment: environment, day: MetricMath.day(first.instant),
                productID: first.productID, storefront: first.storefront, currency: first.currency,
                store: first.store))
        contributions.add(
            1,
            to: MetricCohortKey(
                bundleID: bundleID, environment: environment, kind: MetricCohortKind.customers.rawValue, cohort: cohort,
                offset: 0, currency: ""))
        return contributions
    }

    /// A purchase's net revenue by month, in the customer's cohort: `sign` 1 adds it, -1 takes it away.
    func revenue(
        _ net: [MetricUnit.MonthlyNet], sign: Int64, bundleID: String, environment: String,
        into contributions: inout MetricContributions
    ) {
        for month in net {
            contributions.add(
                sign * month.amount,
                to: MetricCohortKey(
                    bundleID: bundleID, environment: environment, kind: MetricCohortKind.customerRevenue.rawValue,
                    cohort: cohort, offset: max(0, month.month - cohort), currency: month.currency))
        }
    }
}

/// What the ledger stores for each original transaction ID in `metric_units`: the contributions
/// it applied, and what its owner's customer figures read.
struct MetricUnitRecord: Codable, Hashable, Sendable {
    var contributions: MetricContributions
    var firstPayment: MetricFirstPayment?
    var monthlyNet: [MetricUnit.MonthlyNet]

    enum CodingKeys: String, CodingKey { case contributions = "c", firstPayment = "f", monthlyNet = "n" }

    init(_ unit: MetricUnit) {
        self.init(contributions: unit.contributions, firstPayment: unit.firstPayment, monthlyNet: unit.monthlyNet)
    }

    init(contributions: MetricContributions, firstPayment: MetricFirstPayment?, monthlyNet: [MetricUnit.MonthlyNet]) {
        self.contributions = contributions
        self.firstPayment = firstPayment
        self.monthlyNet = monthlyNet
    }
}

/// What the metrics job stores as JSON in a row (`metric_units.record`, `metric_customers.state`):
/// keys sorted, amounts keyed by the app the row names.
protocol StoredMetricJSON: Codable {}

extension StoredMetricJSON {
    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    static func decode(_ json: String, bundleID: String = "") throws -> Self {
        let decoder = JSONDecoder()
        decoder.userInfo[.metricBundleID] = bundleID
        return try decoder.decode(Self.self, from: Data(json.utf8))
    }
}

extension MetricUnitRecord: StoredMetricJSON {}
extension MetricCustomerState: StoredMetricJSON {}
