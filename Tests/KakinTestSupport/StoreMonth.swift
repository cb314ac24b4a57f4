import AppStoreModels
import Foundation
import KakinCore
import KakinLedger

/// A month of sales of the same two products (a consumable and a monthly subscription) in the App
/// Store and on the web checkout, with refunds in both, recorded in one app's sandbox. The tests
/// of the figures and metrics by store read what a ledger makes of it and compare it with what
/// ``expected(_:)`` works out from the sales alone.
public enum StoreMonth {
    /// 2023-11-01 00:00 UTC: the month is November 2023, its days 0 to 29.
    public static let start: Int64 = 1_698_796_800_000
    public static let dayLength: Int64 = 86_400_000
    /// The first day of the month, as days since 1970-01-01.
    public static let firstDay = Int(start / dayLength)
    public static let days = 30

    /// One sale: bought on `day` (at 10:00 UTC) by `user`, refunded on `refundDay` (at 15:00 UTC).
    public struct Sale: Sendable {
        public var id: String
        public var store: PurchaseStore
        public var subscription: Bool
        public var day: Int
        public var price: Int64
        public var currency: String
        public var user: String
        public var refundDay: Int?

        public init(
            id: String, store: PurchaseStore, subscription: Bool, day: Int, price: Int64, currency: String, user: String,
            refundDay: Int? = nil
        ) {
            (self.id, self.store, self.subscription, self.day) = (id, store, subscription, day)
            (self.price, self.currency, self.user, self.refundDay) = (price, currency, user, refundDay)
        }

        public var productID: String { subscription ? "monthly" : "coins100" }
        public var purchase: Int64 { StoreMonth.start + Int64(day) * StoreMonth.dayLength + 36_000_000 }
        /// A subscription's period: 30 days.
        public var expires: Int64? { subscription ? purchase + 30 * StoreMonth.dayLength : nil }
        public var refund: Int64? { refundDay.map { StoreMonth.start + Int64($0) * StoreMonth.dayLength + 54_000_000 } }

        /// Whether it is a paid subscription covering the end of the day numbered `day` of the month.
        public func active(atEndOf day: Int) -> Bool {
            let end = StoreMonth.start + Int64(day + 1) * StoreMonth.dayLength - 1
            guard let expires, purchase <= end else { return false }
            return min(expires, refund ?? .max) > end
        }
    }

    /// The sales: each store sells both products, and refunds some of each store's.
    public static let sales: [Sale] = [
        Sale(id: "a-c1", store: .appStore, subscription: false, day: 1, price: 990, currency: "USD", user: "alice"),
        Sale(id: "a-c2", store: .appStore, subscription: false, day: 3, price: 990, currency: "USD", user: "bob", refundDay: 5),
        Sale(id: "a-s1", store: .appStore, subscription: true, day: 2, price: 9_990, currency: "USD", user: "carol"),
        Sale(id: "a-s2", store: .appStore, subscription: true, day: 4, price: 9_990, currency: "USD", user: "dave", refundDay: 10),
        Sale(id: "w-c1", store: .stripe, subscription: false, day: 1, price: 1_000, currency: "USD", user: "erin"),
        Sale(id: "w-c2", store: .stripe, subscription: false, day: 6, price: 1_000, currency: "USD", user: "frank", refundDay: 8),
        Sale(id: "w-s1", store: .stripe, subscription: true, day: 2, price: 9_000, currency: "USD", user: "gina"),
        Sale(id: "w-s2", store: .stripe, subscription: true, day: 7, price: 8_500, currency: "EUR", user: "hank"),
        Sale(id: "w-s3", store: .stripe, subscription: true, day: 12, price: 9_000, currency: "USD", user: "ivan", refundDay: 20),
    ]

    /// The transaction a sale records: an App Store one with its signed storefront, a web one as
    /// the web checkout records it (no JWS, no storefront).
    public static func transaction(_ sale: Sale) -> RecordedTransaction {
        let web = sale.store == .stripe
        return RecordedTransaction(
            transactionID: sale.id, originalTransactionID: sale.id, bundleID: Fixture.bundleID, appUserID: sale.user,
            productID: sale.productID, productType: sale.subscription ? .autoRenewableSubscription : .consumable,
            purchaseDate: date(sale.purchase), expiresDate: sale.expires.map(date), environment: .sandbox,
            signedTransaction: web ? nil : jws(["transactionId": sale.id, "storefront": "USA"]), source: .app,
            recordedAt: date(sale.purchase), price: sale.price, currency: sale.currency,
            storefront: web ? nil : "USA", store: sale.store)
    }

    /// Records every sale, then revokes those refunded.
    public static func record(in ledger: any PurchaseRoles) async throws {
        for sale in sales { _ = try await ledger.record(transaction(sale), grants: []) }
        for sale in sales {
            guard let refund = sale.refund else { continue }
            _ = try await ledger.revoke(
                transactionID: sale.id, at: date(refund), reason: sale.store == .appStore ? 1 : nil,
                policy: .clampAtZero)
        }
    }

    /// What one store's sales (both stores' with `nil`) add up to over the month.
    public struct Totals: Equatable, Sendable {
        public var purchases = 0
        public var refunds = 0
        /// Gross revenue per currency.
        public var revenue: [String: Int64] = [:]
        /// What the refunds took back, per currency.
        public var refunded: [String: Int64] = [:]
        /// Revenue after Apple's commission (30 %) on the App Store's sales; the web's in full.
        public var proceeds: [String: Int64] = [:]
        /// Paid subscriptions active at the end of each day of the month.
        public var active: [Int] = Array(repeating: 0, count: StoreMonth.days)
        /// Customers whose first paid purchase fell in the month.
        public var newCustomers = 0

        public init() {}
    }

    /// What the sales of `store` (of both with `nil`) add up to, worked out from the sales alone.
    public static func expected(_ store: PurchaseStore?) -> Totals {
        var totals = Totals()
        for sale in sales where store == nil || sale.store == store {
            totals.purchases += 1
            totals.revenue[sale.currency, default: 0] += sale.price
            totals.proceeds[sale.currency, default: 0] += sale.store == .appStore ? sale.price * 7 / 10 : sale.price
            totals.newCustomers += 1
            if sale.refundDay != nil {
                totals.refunds += 1
                totals.refunded[sale.currency, default: 0] += sale.price
            }
            for day in 0..<days where sale.active(atEndOf: day) { totals.active[day] += 1 }
        }
        return totals
    }

    /// The instant `milliseconds` after 1970-01-01.
    public static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    /// A compact JWS whose payload is `fields` (its header and signature are not read).
    static func jws(_ fields: [String: String]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: fields, options: .sortedKeys)) ?? Data()
        let payload = data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "eyJhbGciOiJFUzI1NiJ9.\(payload).c2lnbmF0dXJl"
    }
}
