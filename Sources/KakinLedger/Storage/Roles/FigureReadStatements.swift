import Foundation
import AppStoreModels
import KakinCore

/// A row of `daily_figures`: one app's figures for a UTC day, product, currency (empty when the
/// price is not known), environment and store. The writes at the end of every purchase add to these rows
/// by hand (``boundValues``), in key order.
struct DailyFiguresRow: BoundRecord {
    static let table = "daily_figures"
    static let boundColumns = insertedColumns
    typealias Columns = CodingKeys

    var bundleID: String
    var day: Int
    var productID: String
    var currency: String
    var environment: String
    var store: String
    var purchases: Int64
    var refunds: Int64
    var revenue: Int64
    var subscriptionStarts: Int64
    var subscriptionEnds: Int64

    enum CodingKeys: String, CodingKey, CaseIterable {
        case bundleID = "bundle_id"
        case day
        case productID = "product_id"
        case currency, environment, store, purchases, refunds, revenue
        case subscriptionStarts = "subscription_starts"
        case subscriptionEnds = "subscription_ends"
    }

    /// The row of `key` holding `values` (what a write adds to it).
    init(_ key: FigureKey, _ values: FigureValues) {
        (bundleID, day, productID, currency, environment, store) =
            (key.bundleID, key.day, key.productID, key.currency, key.environment, key.store)
        (purchases, refunds, revenue, subscriptionStarts, subscriptionEnds) =
            (values.purchases, values.refunds, values.revenue, values.subscriptionStarts, values.subscriptionEnds)
    }

    var boundValues: [LedgerValue] {
        [
            .text(bundleID), .integer(Int64(day)), .text(productID), .text(currency), .text(environment),
            .text(store), .integer(purchases), .integer(refunds), .integer(revenue), .integer(subscriptionStarts),
            .integer(subscriptionEnds),
        ]
    }

    var figures: DailyFigures {
        get throws {
            DailyFigures(
                day: day, productID: productID, currency: currency.isEmpty ? nil : currency,
                environment: AppStoreEnvironment(rawValue: environment), store: try PurchaseStore.stored(store),
                purchases: Int(purchases), refunds: Int(refunds), revenue: revenue,
                subscriptionStarts: Int(subscriptionStarts), subscriptionEnds: Int(subscriptionEnds))
        }
    }
}

/// A customer found by the customers page, as one of its statements reads it.
private struct CustomerKeyRow: Decodable, Sendable {
    var bundle_id: String
    var app_user_id: String?
    var purchase_date: Int64?
    var transaction_id: String?
}

/// A customer's count of transactions and newest purchase.
private struct CustomerCountRow: Decodable, Sendable {
    var bundle_id: String
    var app_user_id: String
    var n: Int64
    var last: Int64?
}

/// Two sums of subscriptions started less ended, of one store.
private struct ActiveSums: Decodable, Sendable {
    var store: String
    var before: Int64
    var through: Int64
}

/// A count of one store.
private struct StoreCount: Decodable, Sendable {
    var store: String
    var value: Int64
}

extension PurchaseStore {
    /// The store a row names; a value the schema's check lets through is always known.
    static func stored(_ raw: String) throws -> PurchaseStore {
        guard let store = PurchaseStore(rawValue: raw) else {
            throw LedgerStoreError(.inconsistentState, "unknown store '\(raw)'")
        }
        return store
    }
}

/// The dashboard's bounded reads, the overview's figures and the customers page, the same
/// statements on both engines.
extension StatementEngine {
    public func dailyFigures(bundleID: String, days: Range<Int>, now: Date) async throws -> DailyFiguresPeriod {
        let moment = LedgerTime.milliseconds(now)
        let today = DailyFigures.floorDivide(moment, DailyFigures.dayLength)
        let tomorrow = (today + 1) * DailyFigures.dayLength
        let (first, end) = (Int64(days.lowerBound), Int64(days.upperBound))
        let environments = AppStoreEnvironment.knownValues.map(\.rawValue)
        return try await snapshot(
            .run([
                """
                SELECT \(unescaped: DailyFiguresRow.selection())
                FROM daily_figures WHERE bundle_id = \(bundleID) AND day >= \(first) AND day < \(end)
                ORDER BY day, product_id, currency, environment, store
                """,
                """
                SELECT store,
                    CAST(COALESCE(SUM(CASE WHEN day < \(first) THEN subscription_starts - subscription_ends END), 0)
                        AS BIGINT) AS before,
                    CAST(COALESCE(SUM(CASE WHEN day <= \(today) THEN subscription_starts - subscription_ends END), 0)
                        AS BIGINT) AS through
                FROM daily_figures WHERE bundle_id = \(bundleID) AND day <= \(max(first - 1, today))
                GROUP BY store ORDER BY store
                """,
                """
                SELECT store, COUNT(*) AS value FROM transactions
                WHERE bundle_id = \(bundleID) AND environment IN (\(list: environments))
                  AND expires_date > \(moment) AND expires_date < \(tomorrow)
                  AND product_type = 'Auto-Renewable Subscription'
                  AND (revocation_date IS NULL OR revocation_date > \(moment)) AND purchase_date < \(moment)
                GROUP BY store ORDER BY store
                """,
            ]) { rows in
                let figures = try rows[0].decode(DailyFiguresRow.self).map { try $0.figures }
                var (before, now): ([PurchaseStore: Int], [PurchaseStore: Int]) = ([:], [:])
                for sums in try rows[1].decode(ActiveSums.self) {
                    let store = try PurchaseStore.stored(sums.store)
                    before[store, default: 0] += Int(sums.before)
                    now[store, default: 0] += Int(sums.through)
                }
                for endingLater in try rows[2].decode(StoreCount.self) {
                    now[try PurchaseStore.stored(endingLater.store), default: 0] += Int(endingLater.value)
                }
                (before, now) = (before.filter { $0.value != 0 }, now.filter { $0.value != 0 })
                return .done(
                    DailyFiguresPeriod(
                        figures: figures, subscriptionsActiveBefore: before.values.reduce(0, +),
                        subscriptionsActiveNow: now.values.reduce(0, +), subscriptionsActiveBeforeByStore: before,
                        subscriptionsActiveNowByStore: now))
            })
    }

    public func findCustomers(matching query: String, limit: Int, bundleID: String?) async throws -> [CustomerMatch] {
        guard limit > 0 else { return [] }
        let found: LedgerTransaction<CustomerSearch.Found>
        if query.isEmpty {
            found = Self.newestCustomers(limit: limit, found: CustomerSearch.Found(bundleID: bundleID), after: nil, read: 0)
        } else {
            found = .run([
                """
                SELECT bundle_id, app_user_id FROM transactions
                WHERE transaction_id = \(query) AND app_user_id IS NOT NULL
                UNION
                SELECT bundle_id, app_user_id FROM transactions
                WHERE original_transaction_id = \(query) AND app_user_id IS NOT NULL
                """,
                CustomerSearch.byPrefix(query, bundleID: bundleID, limit: limit),
            ]) { rows in
                var found = CustomerSearch.Found(bundleID: bundleID)
                for row in try rows[0].decode(CustomerKeyRow.self) + rows[1].decode(CustomerKeyRow.self) {
                    guard let owner = row.app_user_id else { continue }
                    found.add(.init(bundleID: row.bundle_id, appUserID: owner))
                }
                return .done(found)
            }
        }
        let counted: LedgerTransaction<[CustomerMatch]> = found.then { found in
            guard found.count > 0 else { return .done([]) }
            // One statement for every customer found, each counted through the index by customer.
            var statement: LedgerSQL = ""
            for (index, key) in found.keys.enumerated() {
                statement = """
                    \(statement)\(unescaped: index > 0 ? " UNION ALL " : "")SELECT \(key.bundleID) AS bundle_id, \
                    \(key.appUserID) AS app_user_id, COUNT(*) AS n, MAX(purchase_date) AS last FROM transactions \
                    WHERE bundle_id = \(key.bundleID) AND app_user_id = \(key.appUserID)
                    """
            }
            return .run([statement]) { rows in
                .done(
                    try rows[0].decode(CustomerCountRow.self).map {
                        CustomerMatch(
                            bundleID: $0.bundle_id, appUserID: $0.app_user_id, transactionCount: Int($0.n),
                            lastPurchaseDate: LedgerTime.date($0.last ?? 0))
                    })
            }
        }
        return CustomerSearch.ordered(try await snapshot(counted), limit: limit)
    }

    /// The owners of the newest purchases, newest first, walking the index by purchase date a page
    /// at a time (passing purchases without an owner) until `limit` customers are found (or
    /// ``CustomerSearch/scanLimit`` rows were read).
    private static func newestCustomers(
        limit: Int, found: CustomerSearch.Found, after cursor: (date: Int64, id: String)?, read: Int
    ) -> LedgerTransaction<CustomerSearch.Found> {
        guard found.count < limit, read < CustomerSearch.scanLimit else { return .done(found) }
        let after: LedgerSQL = cursor.map { "AND (purchase_date, transaction_id) < (\($0.date), \($0.id))" } ?? ""
        return .run([
            """
            SELECT bundle_id, app_user_id, purchase_date, transaction_id FROM transactions
            WHERE app_user_id IS NOT NULL \(after)
            ORDER BY purchase_date DESC, transaction_id DESC LIMIT \(CustomerSearch.page)
            """
        ]) { rows in
            var found = found
            let rows = try rows[0].decode(CustomerKeyRow.self)
            for row in rows {
                guard let owner = row.app_user_id else { continue }
                found.add(.init(bundleID: row.bundle_id, appUserID: owner))
                if found.count == limit { return .done(found) }
            }
            guard let last = rows.last, rows.count == CustomerSearch.page, let date = last.purchase_date,
                let id = last.transaction_id
            else { return .done(found) }
            return newestCustomers(limit: limit, found: found, after: (date, id), read: read + rows.count)
        }
    }
}

extension CustomerSearch {
    /// Customers whose app user ID starts with `query`, ignoring case, of one app or of every app:
    /// the range of lowercase IDs, compared byte by byte, walks the index by prefix, in the
    /// order of the groups; the `LIKE` that ignores case keeps its exact meaning. The app is
    /// compared as an expression (`|| ''`), not as the column: SQLite would otherwise read an
    /// app's customers from the index by customer, or group the prefix's rows again in a
    /// temporary tree, reading every customer the prefix matches.
    static func byPrefix(_ query: String, bundleID: String?, limit: Int) -> LedgerSQL {
        """
        SELECT bundle_id, app_user_id FROM transactions
        WHERE lower(app_user_id)\(.bytewise) >= lower(\(query))
          AND lower(app_user_id)\(.bytewise) < lower(\(query)) || \(last)
          AND app_user_id \(.likeIgnoringCase) \(LedgerSQLDialect.likePrefix(query)) ESCAPE '\\'
          \(bundleID.map { "AND bundle_id || '' = \($0)" } ?? "" as LedgerSQL)
        GROUP BY lower(app_user_id)\(.bytewise), bundle_id, app_user_id
        ORDER BY lower(app_user_id)\(.bytewise), bundle_id, app_user_id LIMIT \(limit)
        """
    }
}
