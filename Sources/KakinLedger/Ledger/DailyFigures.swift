public import AppStoreModels
public import Foundation
public import KakinCore

/// What an app's transactions add up to on one UTC day, for one product, currency, environment
/// and store: the figures the ledger keeps in `daily_figures`, changed in the same database
/// transaction as the transactions they count, so reading a period reads one row per day,
/// product, currency, environment and store, never the transactions.
///
/// - A transaction counts as a purchase, and its price × quantity as revenue, on the day of its
///   purchase date, once: when it is first recorded.
/// - A revoked transaction counts as a refund on the day of its revocation date; a later, larger
///   refund of the same transaction moves it to the new date, and counts it once still. A refund
///   Apple reverses no longer counts (nor ends a subscription early).
/// - An auto-renewable subscription transaction is active from its purchase date until the
///   earlier of its expiry and its revocation: it adds a start on the day it starts and an end
///   on the day it ends (a revocation recorded later moves the end). The subscriptions active at
///   the end of a day are the starts less the ends of every day up to it.
public struct DailyFigures: Hashable, Sendable {
    /// The day, as the number of days since 1970-01-01 (UTC).
    public var day: Int
    /// The product bought.
    public var productID: String
    /// The currency of ``revenue`` (ISO 4217, as Apple signs it), or `nil` for transactions whose
    /// price the ledger does not know (recorded without a signed transaction, or signed without a price).
    public var currency: String?
    /// The environment that signed the transactions (for a web purchase, `Sandbox` in the payment
    /// provider's test mode, `Production` otherwise).
    public var environment: AppStoreEnvironment
    /// Where the customers paid: the App Store, or the app's web checkout.
    public var store: PurchaseStore
    /// Transactions purchased that day (renewals included).
    public var purchases: Int
    /// Transactions revoked that day.
    public var refunds: Int
    /// Price × quantity of the purchases, in milliunits of ``currency`` (refunds are counted, not subtracted).
    public var revenue: Int64
    /// Subscription transactions that started that day.
    public var subscriptionStarts: Int
    /// Subscription transactions that ended (expired or were revoked) that day.
    public var subscriptionEnds: Int

    /// Creates a day's figures from their parts.
    public init(
        day: Int, productID: String, currency: String?, environment: AppStoreEnvironment,
        store: PurchaseStore = .appStore, purchases: Int = 0, refunds: Int = 0, revenue: Int64 = 0,
        subscriptionStarts: Int = 0, subscriptionEnds: Int = 0
    ) {
        self.day = day
        self.productID = productID
        self.currency = currency
        self.environment = environment
        self.store = store
        self.purchases = purchases
        self.refunds = refunds
        self.revenue = revenue
        self.subscriptionStarts = subscriptionStarts
        self.subscriptionEnds = subscriptionEnds
    }

    /// Milliseconds in a day.
    static let dayLength: Int64 = 86_400_000

    /// The day number (days since 1970-01-01, UTC) of `date`.
    public static func day(of date: Date) -> Int {
        Int(floorDivide(LedgerTime.milliseconds(date), dayLength))
    }

    /// The instant the day numbered `day` starts (midnight UTC).
    public static func start(ofDay day: Int) -> Date {
        LedgerTime.date(Int64(day) * dayLength)
    }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
    }
}

/// An app's figures over a period of UTC days, with what the active-subscription count starts
/// from: see ``LedgerStore/dailyFigures(bundleID:days:now:)``.
public struct DailyFiguresPeriod: Hashable, Sendable {
    /// The rows of the period's days, by day, product, currency, environment and store; days with
    /// nothing recorded have none.
    public var figures: [DailyFigures]
    /// The subscriptions active at the end of the day before the period: the starts less the
    /// ends of every day before it.
    public var subscriptionsActiveBefore: Int
    /// The subscriptions active at `now`: the starts less the ends of every day up to and
    /// including now's, plus those whose period ends later that day.
    public var subscriptionsActiveNow: Int
    /// ``subscriptionsActiveBefore`` by the store the subscriptions were bought in; a store with
    /// none is left out.
    public var subscriptionsActiveBeforeByStore: [PurchaseStore: Int]
    /// ``subscriptionsActiveNow`` by the store the subscriptions were bought in; a store with none
    /// is left out.
    public var subscriptionsActiveNowByStore: [PurchaseStore: Int]

    /// Creates a period's figures from their parts. Without the counts by store, every active
    /// subscription counts as the App Store's.
    public init(
        figures: [DailyFigures], subscriptionsActiveBefore: Int, subscriptionsActiveNow: Int,
        subscriptionsActiveBeforeByStore: [PurchaseStore: Int]? = nil,
        subscriptionsActiveNowByStore: [PurchaseStore: Int]? = nil
    ) {
        self.figures = figures
        self.subscriptionsActiveBefore = subscriptionsActiveBefore
        self.subscriptionsActiveNow = subscriptionsActiveNow
        self.subscriptionsActiveBeforeByStore =
            subscriptionsActiveBeforeByStore ?? Self.appStoreOnly(subscriptionsActiveBefore)
        self.subscriptionsActiveNowByStore = subscriptionsActiveNowByStore ?? Self.appStoreOnly(subscriptionsActiveNow)
    }

    private static func appStoreOnly(_ count: Int) -> [PurchaseStore: Int] {
        count == 0 ? [:] : [.appStore: count]
    }
}

/// What a transaction row adds to `daily_figures`: the columns that decide it, and the rows of
/// figures it contributes. A write that changes a row applies the difference between what it
/// contributed before and what it contributes after (``FigureChanges/replace(_:with:)``).
struct FigureSource: Hashable, Sendable {
    var bundleID: String
    var productID: String
    var productType: String
    var environment: String
    /// Where the customer paid (``PurchaseStore``'s raw value).
    var store: String
    var quantity: Int64
    var purchaseDate: Int64
    var expiresDate: Int64?
    var revocationDate: Int64?
    var price: Int64?
    var currency: String?

    init(_ row: TransactionRow) {
        self.init(
            bundleID: row.bundleID, productID: row.productID, productType: row.productType,
            environment: row.environment, store: row.store, quantity: row.quantity, purchaseDate: row.purchaseDate,
            expiresDate: row.expiresDate, revocationDate: row.revocationDate, price: row.price, currency: row.currency)
    }

    init(
        bundleID: String, productID: String, productType: String, environment: String,
        store: String = PurchaseStore.appStore.rawValue, quantity: Int64, purchaseDate: Int64, expiresDate: Int64?,
        revocationDate: Int64?, price: Int64?, currency: String?
    ) {
        self.bundleID = bundleID
        self.productID = productID
        self.productType = productType
        self.environment = environment
        self.store = store
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.price = price
        self.currency = currency
    }

    /// When a subscription transaction stops being active: its expiry, or its revocation when earlier;
    /// `nil` when it is no subscription or was never active.
    var subscriptionEnd: Int64? {
        guard productType == ProductType.autoRenewableSubscription.rawValue, let expires = expiresDate else { return nil }
        let end = revocationDate.map { min($0, expires) } ?? expires
        return end > purchaseDate ? end : nil
    }

    /// The figures it contributes, each once.
    var contributions: [FigureKey: FigureValues] {
        var figures: [FigureKey: FigureValues] = [:]
        func key(_ instant: Int64) -> FigureKey {
            FigureKey(
                bundleID: bundleID, day: Int(DailyFigures.floorDivide(instant, DailyFigures.dayLength)),
                productID: productID, currency: currency ?? "", environment: environment, store: store)
        }
        let bought = key(purchaseDate)
        figures[bought, default: FigureValues()].purchases += 1
        if let price {
            figures[bought, default: FigureValues()].revenue += price * quantity
        }
        if let revoked = revocationDate {
            figures[key(revoked), default: FigureValues()].refunds += 1
        }
        if let end = subscriptionEnd {
            figures[bought, default: FigureValues()].subscriptionStarts += 1
            figures[key(end), default: FigureValues()].subscriptionEnds += 1
        }
        return figures
    }
}

/// The key of a `daily_figures` row; `currency` is empty when the price is not known, `store` is
/// ``PurchaseStore``'s raw value.
struct FigureKey: Hashable, Sendable, Comparable {
    var bundleID: String
    var day: Int
    var productID: String
    var currency: String
    var environment: String
    var store: String = PurchaseStore.appStore.rawValue

    static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.bundleID, lhs.day, lhs.productID, lhs.currency, lhs.environment, lhs.store)
            < (rhs.bundleID, rhs.day, rhs.productID, rhs.currency, rhs.environment, rhs.store)
    }
}

/// The figures of a `daily_figures` row, or what a write adds to them.
struct FigureValues: Hashable, Sendable {
    var purchases: Int64 = 0
    var refunds: Int64 = 0
    var revenue: Int64 = 0
    var subscriptionStarts: Int64 = 0
    var subscriptionEnds: Int64 = 0

    var isZero: Bool { self == FigureValues() }

    static func + (lhs: Self, rhs: Self) -> Self {
        FigureValues(
            purchases: lhs.purchases + rhs.purchases, refunds: lhs.refunds + rhs.refunds,
            revenue: lhs.revenue + rhs.revenue, subscriptionStarts: lhs.subscriptionStarts + rhs.subscriptionStarts,
            subscriptionEnds: lhs.subscriptionEnds + rhs.subscriptionEnds)
    }

    static prefix func - (value: Self) -> Self {
        FigureValues(
            purchases: -value.purchases, refunds: -value.refunds, revenue: -value.revenue,
            subscriptionStarts: -value.subscriptionStarts, subscriptionEnds: -value.subscriptionEnds)
    }
}

/// What one database transaction adds to `daily_figures`, summed per row, written once at its
/// end in key order (so that writers meeting the same rows take their locks in the same order).
struct FigureChanges: Sendable {
    private(set) var changes: [FigureKey: FigureValues] = [:]

    var isEmpty: Bool { changes.isEmpty }

    /// A row recorded for the first time.
    mutating func record(_ source: FigureSource) {
        replace(nil, with: source)
    }

    /// A row that changed from `old` to `new` (either `nil` for no row).
    mutating func replace(_ old: FigureSource?, with new: FigureSource?) {
        guard old != new else { return }
        for (key, values) in old?.contributions ?? [:] { add(-values, to: key) }
        for (key, values) in new?.contributions ?? [:] { add(values, to: key) }
    }

    private mutating func add(_ values: FigureValues, to key: FigureKey) {
        let sum = changes[key, default: FigureValues()] + values
        changes[key] = sum.isZero ? nil : sum
    }

    /// The changes in key order.
    var sorted: [(key: FigureKey, values: FigureValues)] {
        changes.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}

/// The one statement that adds changes to a `daily_figures` row, creating it when missing. Both
/// engines run it, SQLite with `?` placeholders and PostgreSQL with `$n`.
enum FigureStatements {
    /// What follows the insert of ``DailyFiguresRow``s: adding to a row already there.
    static let addConflict = """
        ON CONFLICT (bundle_id, day, product_id, currency, environment, store) DO UPDATE SET
            purchases = daily_figures.purchases + excluded.purchases,
            refunds = daily_figures.refunds + excluded.refunds,
            revenue = daily_figures.revenue + excluded.revenue,
            subscription_starts = daily_figures.subscription_starts + excluded.subscription_starts,
            subscription_ends = daily_figures.subscription_ends + excluded.subscription_ends
        """

    /// The name of the pass that fills in the price of rows recorded before the ledger kept it
    /// (``SignedPrice``), in `ledger_backfills`.
    static let priceBackfill = "transaction_prices"
    /// How many rows one step of that pass reads.
    static let priceBackfillPage = 500
}

/// The price and currency Apple signs in a transaction's JWS, read from its payload without
/// verifying it: the ledger stores only JWS it verified when they arrived.
struct SignedPrice: Decodable, Hashable, Sendable {
    var price: Int64?
    var currency: String?

    /// The price signed in `jws`; `nil` when it cannot be read or names no price and currency.
    init?(jws: String) {
        guard let data = JWSPayloadBytes.decode(jws),
            let decoded = try? JSONDecoder().decode(SignedPrice.self, from: data), decoded.price != nil,
            decoded.currency != nil
        else { return nil }
        self = decoded
    }
}

/// How the customers page finds customers without reading a whole table (see
/// ``LedgerStore/findCustomers(matching:limit:bundleID:)``).
enum CustomerSearch {
    /// Rows read per step when walking the newest purchases.
    static let page = 500
    /// The most rows the walk reads before it answers with the customers found so far (a few
    /// customers with very many recent purchases cannot make the page read the whole table).
    static let scanLimit = 20_000
    /// The character after every other one in UTF-8 byte order: `prefix + last` bounds the IDs
    /// that start with `prefix`.
    static let last = "\u{10FFFF}"

    /// A customer found: the app and the user ID.
    struct Key: Hashable {
        var bundleID: String
        var appUserID: String
    }

    /// Customers in the order found, each once; of one app only when `bundleID` is given.
    struct Found: Sendable {
        private(set) var keys: [Key] = []
        private var seen = Set<Key>()
        /// The app whose customers are kept (`nil`: every app's).
        let bundleID: String?

        init(bundleID: String? = nil) {
            self.bundleID = bundleID
        }

        var count: Int { keys.count }

        mutating func add(_ key: Key) {
            guard bundleID == nil || key.bundleID == bundleID else { return }
            if seen.insert(key).inserted { keys.append(key) }
        }
    }

    /// The matches, newest purchase first, at most `limit`.
    static func ordered(_ matches: [CustomerMatch], limit: Int) -> [CustomerMatch] {
        Array(
            matches.sorted {
                ($1.lastPurchaseDate, $0.appUserID, $0.bundleID) < ($0.lastPurchaseDate, $1.appUserID, $1.bundleID)
            }.prefix(limit))
    }
}
