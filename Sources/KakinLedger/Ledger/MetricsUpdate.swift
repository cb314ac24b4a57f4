import Foundation

/// One step of bringing the subscription metrics up to date, the same on both engines: the
/// subscriptions claimed from `metric_pending` are worked out again from their transactions,
/// and the difference from what each contributed before is added to the rollups, with their
/// owners' customer figures, in the database transaction that claimed them.
struct MetricsUpdate: Sendable {
    /// A claimed subscription: an app's original transaction ID.
    struct UnitKey: Hashable, Sendable, Comparable {
        var bundleID: String
        var originalTransactionID: String

        static func < (lhs: Self, rhs: Self) -> Bool {
            (lhs.bundleID, lhs.originalTransactionID) < (rhs.bundleID, rhs.originalTransactionID)
        }
    }

    /// A customer of an app in one environment.
    struct CustomerKey: Hashable, Sendable, Comparable {
        var bundleID: String
        var environment: String
        var customer: String

        static func < (lhs: Self, rhs: Self) -> Bool {
            (lhs.bundleID, lhs.environment, lhs.customer) < (rhs.bundleID, rhs.environment, rhs.customer)
        }
    }

    /// What the ledger held for a subscription before this step.
    struct StoredUnit: Sendable {
        var environment: String
        var customer: String
        var record: MetricUnitRecord
    }

    /// How a subscription's rows change.
    struct UnitWrite: Sendable {
        var key: UnitKey
        /// The new record; `nil` removes it (no transaction holds that ID any more).
        var unit: MetricUnit?
    }

    /// How one of a customer's purchases changes in this step: its record before and after
    /// (`nil` when it was not, or is no longer, the customer's).
    struct PurchaseChange: Sendable {
        var purchase: String
        var old: MetricUnitRecord?
        var new: MetricUnitRecord?
    }

    /// The rollups' changes, summed over the step, written in key order at its end.
    private(set) var change = MetricContributions()
    private(set) var writes: [UnitWrite] = []
    /// The customers whose purchases changed, with the changes.
    private(set) var customers: [CustomerKey: [PurchaseChange]] = [:]

    /// Works out each claimed subscription again.
    mutating func update(
        _ keys: [UnitKey], transactions: [UnitKey: [TransactionRow]], graceExpiries: [UnitKey: [MetricGrace]],
        stored: [UnitKey: StoredUnit]
    ) {
        for key in keys.sorted() {
            let rows = transactions[key] ?? []
            let old = stored[key]
            var unit: MetricUnit?
            if !rows.isEmpty {
                unit = MetricUnit(
                    bundleID: key.bundleID, originalTransactionID: key.originalTransactionID,
                    transactions: rows.map { MetricTransaction($0) }, graceExpiries: graceExpiries[key] ?? [])
            }
            change.merge(
                (unit?.contributions ?? MetricContributions()).difference(
                    from: old?.record.contributions ?? MetricContributions()))
            writes.append(UnitWrite(key: key, unit: unit))
            note(
                key.originalTransactionID,
                from: old.map { (CustomerKey(bundleID: key.bundleID, environment: $0.environment, customer: $0.customer), $0.record) },
                to: unit.map { (CustomerKey(bundleID: key.bundleID, environment: $0.environment, customer: $0.customer), MetricUnitRecord($0)) })
        }
    }

    /// Notes how one of a customer's purchases changes: its owner and record before and after.
    mutating func note(
        _ purchase: String, from old: (CustomerKey, MetricUnitRecord)?, to new: (CustomerKey, MetricUnitRecord)?
    ) {
        // A purchase that never paid nor brought revenue changes no customer figure.
        func counts(_ record: MetricUnitRecord?) -> Bool { record?.firstPayment != nil || !(record?.monthlyNet.isEmpty ?? true) }
        guard counts(old?.1) || counts(new?.1) else { return }
        if let old, let new, old.0 == new.0 {
            guard old.1.firstPayment != new.1.firstPayment || old.1.monthlyNet != new.1.monthlyNet else { return }
            customers[old.0, default: []].append(PurchaseChange(purchase: purchase, old: old.1, new: new.1))
            return
        }
        if let old { customers[old.0, default: []].append(PurchaseChange(purchase: purchase, old: old.1, new: nil)) }
        if let new { customers[new.0, default: []].append(PurchaseChange(purchase: purchase, old: nil, new: new.1)) }
    }

    /// Adds `contributions` to the rollups' changes.
    mutating func add(_ contributions: MetricContributions) {
        change.merge(contributions)
    }

    /// Sets the customers' changes directly (tests of the customer figures).
    mutating func setChanges(_ changes: [CustomerKey: [PurchaseChange]]) {
        customers = changes
    }

    /// A customer's new state when the changes of this step decide it without the records of
    /// their other purchases, its difference added to the rollups; `nil` when the customer must be
    /// worked out again from every purchase (``update(customer:stored:purchases:)``): the
    /// purchase that made them a paying customer changed, or one paid earlier (on another day, or
    /// for another product, storefront, currency or store).
    mutating func update(customer: CustomerKey, stored: MetricCustomerState?) -> MetricCustomerState?? {
        let changes = customers[customer] ?? []
        if let stored {
            for change in changes where change.purchase == stored.purchase && change.new?.firstPayment != stored.first {
                return nil
            }
        }
        let earliest = changes.reduce(stored) { found, change in
            MetricCustomerState.earliest(
                found, change.new?.firstPayment.map { MetricCustomerState(first: $0, purchase: change.purchase) })
        }
        // The first payment may move to another purchase counted the same way (the same day,
        // product, storefront, currency and store: the same base and cohort); no figure of the customer's
        // other purchases changes then.
        guard
            earliest == stored || stored == nil
                || earliest?.base(bundleID: customer.bundleID, environment: customer.environment)
                    == stored?.base(bundleID: customer.bundleID, environment: customer.environment)
        else { return nil }
        // A customer who was not paying had no revenue: only the changed purchases can bring some.
        guard let state = earliest else { return .some(nil) }
        if stored == nil { change.merge(state.base(bundleID: customer.bundleID, environment: customer.environment)) }
        for purchase in changes {
            state.revenue(
                purchase.new?.monthlyNet ?? [], sign: 1, bundleID: customer.bundleID, environment: customer.environment,
                into: &change)
            if stored != nil {
                state.revenue(
                    purchase.old?.monthlyNet ?? [], sign: -1, bundleID: customer.bundleID,
                    environment: customer.environment, into: &change)
            }
        }
        return .some(state)
    }

    /// A customer worked out again from the records of all their purchases as this step leaves
    /// them (`purchases`, by original transaction ID); the difference from what they contributed
    /// before (their stored state, over their purchases' records before the step: those records
    /// less the step's changes) is added.
    mutating func update(
        customer: CustomerKey, stored: MetricCustomerState?, purchases: [String: MetricUnitRecord]
    ) -> MetricCustomerState? {
        let state = purchases.reduce(nil as MetricCustomerState?) { found, purchase in
            MetricCustomerState.earliest(
                found, purchase.value.firstPayment.map { MetricCustomerState(first: $0, purchase: purchase.key) })
        }
        let (bundleID, environment) = (customer.bundleID, customer.environment)
        if let stored {
            change.merge(MetricContributions().difference(from: stored.base(bundleID: bundleID, environment: environment)))
            // What the purchases brought before this step: what they bring now, less this step's changes.
            for record in purchases.values { stored.revenue(record.monthlyNet, sign: -1, bundleID: bundleID, environment: environment, into: &change) }
            for purchase in customers[customer] ?? [] {
                stored.revenue(purchase.new?.monthlyNet ?? [], sign: 1, bundleID: bundleID, environment: environment, into: &change)
                stored.revenue(purchase.old?.monthlyNet ?? [], sign: -1, bundleID: bundleID, environment: environment, into: &change)
            }
        }
        if let state {
            change.merge(state.base(bundleID: bundleID, environment: environment))
            for record in purchases.values { state.revenue(record.monthlyNet, sign: 1, bundleID: bundleID, environment: environment, into: &change) }
        }
        return state
    }
}

/// The statements both engines run to keep the metrics: SQLite with `?` placeholders, PostgreSQL
/// with `$n`.
enum MetricStatements {
    static let dayColumns = MetricColumn.allCases.map(\.rawValue)

    /// Adds to a `metric_days` row, creating it when missing.
    static let addDayConflict =
        "ON CONFLICT (bundle_id, environment, day, product_id, storefront, currency, store) DO UPDATE SET "
        + dayColumns.map { "\($0) = metric_days.\($0) + excluded.\($0)" }.joined(separator: ", ")

    /// How a PostgreSQL write marks a purchase already marked: it locks the mark until it commits
    /// (a no-op update), so that a step of the job cannot take the mark and read the purchase
    /// before the write's transaction is visible; a mark the job took meanwhile is made anew.
    /// (`DO NOTHING` would take no lock, and the job could consume the mark without the write.)
    static let markConflict = """
        ON CONFLICT (bundle_id, original_transaction_id) DO UPDATE SET
            original_transaction_id = excluded.original_transaction_id
        """

    static let addCohortConflict = """
        ON CONFLICT (bundle_id, environment, kind, cohort, month_offset, currency) DO UPDATE SET
            value = metric_cohorts.value + excluded.value
        """
}

extension MetricStatements {
    /// The instants churn compares: the last before the period and the period's last.
    static func churnInstants(_ period: MetricPeriod) -> (before: Int64, last: Int64) {
        (LedgerTime.milliseconds(period.start) - 1, LedgerTime.milliseconds(period.end) - 1)
    }
}
