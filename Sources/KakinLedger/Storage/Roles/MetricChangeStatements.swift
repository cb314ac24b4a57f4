/// Where a write adds what it changes in the rollups (`metric_days`, `metric_cohorts`).
///
/// The rollups hold one row per app, day, product, storefront, currency and store: every purchase of a
/// day adds to the same few rows, and a writer that added to one would hold it until it commits,
/// so that concurrent writers queued behind each other. The writes that record, revoke,
/// reinstate or move purchases append their changes as rows of their own instead
/// (``changes``), which no two writers share; the metrics job, which servers take turns to run,
/// adds to the rollups itself (``rollups``) and folds the change rows into them in batches
/// (``MetricStatements/foldChanges(limit:)``).
enum MetricRollupTarget: Sendable {
    case rollups
    case changes

    var dayTable: String { self == .rollups ? "metric_days" : "metric_day_changes" }
    var cohortTable: String { self == .rollups ? "metric_cohorts" : "metric_cohort_changes" }
    /// What follows the insert of day rows: adding to a row already there, or nothing.
    var dayConflict: String { self == .rollups ? MetricStatements.addDayConflict : "" }
    /// What follows the insert of cohort rows: adding to a row already there, or nothing.
    var cohortConflict: String { self == .rollups ? MetricStatements.addCohortConflict : "" }
}

/// A row of one of the rollups (``MetricDayRow``, ``MetricCohortRow``), whose changes the writes
/// append to a table of their own (``RollupChangeRow``).
protocol MetricRollupRow: BoundRecord {
    /// The table the writes append this rollup's changes to.
    static var changeTable: String { get }
}

/// A row of a rollup's change table (`metric_day_changes`, `metric_cohort_changes`): what one
/// write adds to a rollup row, under an id the database gives it, in whose order the job folds
/// the rows. Its other columns are the rollup's, and the writes bind it as the rollup row it adds
/// to (``boundValues``).
struct RollupChangeRow<Rollup: MetricRollupRow>: BoundRecord, NamedColumns {
    static var table: String { Rollup.changeTable }
    static var generatedColumns: Set<String> { ["id"] }
    static var columnNames: [String] { ["id"] + Rollup.columns }
    static var boundColumns: String { Rollup.boundColumns }
    typealias Columns = NamedColumn<Self>

    var id: Int64?
    var change: Rollup

    init(id: Int64? = nil, change: Rollup) {
        (self.id, self.change) = (id, change)
    }

    init(from decoder: any Decoder) throws {
        id = try decoder.container(keyedBy: Columns.self).decodeIfPresent(Int64.self, forKey: "id")
        change = try Rollup(from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
        var row = encoder.container(keyedBy: Columns.self)
        try row.encodeIfPresent(id, forKey: "id")
        try change.encode(to: encoder)
    }

    var boundValues: [LedgerValue] { change.boundValues }
}

/// A row of `metric_day_changes`: what one write adds to a row of `metric_days`.
typealias MetricDayChangeRow = RollupChangeRow<MetricDayRow>
/// A row of `metric_cohort_changes`: what one write adds to a row of `metric_cohorts`.
typealias MetricCohortChangeRow = RollupChangeRow<MetricCohortRow>

extension MetricStatements {
    /// How many change rows of each kind a step of the job folds for each purchase it may work
    /// out (its `limit`): the rows are small, and each is one sum.
    static let changesPerPurchase = 20

    /// The columns that key a `metric_days` row.
    static let dayKeys = ["bundle_id", "environment", "day", "product_id", "storefront", "currency", "store"]
    /// The columns that key a `metric_cohorts` row.
    static let cohortKeys = ["bundle_id", "environment", "kind", "cohort", "month_offset", "currency"]

    /// One batch of the change rows folded into the rollups: up to `limit` rows of each kind,
    /// oldest first, summed per rollup row and added in key order, then deleted. Its answer is
    /// how many change rows it folded.
    ///
    /// The rows are picked by id and only this step deletes them (a step runs under the metrics
    /// job's lock), so what is added is exactly what is deleted, whatever writers commit
    /// meanwhile.
    static func foldChanges(limit: Int) -> LedgerTransaction<Int> {
        .run([
            "SELECT id AS value FROM metric_day_changes ORDER BY id LIMIT \(limit)",
            "SELECT id AS value FROM metric_cohort_changes ORDER BY id LIMIT \(limit)",
        ]) { rows in
            let days = try rows[0].decode(LedgerColumn<Int64>.self).map(\.value)
            let cohorts = try rows[1].decode(LedgerColumn<Int64>.self).map(\.value)
            var statements: [LedgerSQL] = []
            if !days.isEmpty {
                statements += fold(
                    days, from: "metric_day_changes", into: "metric_days", keys: dayKeys, sums: dayColumns,
                    conflict: addDayConflict)
            }
            if !cohorts.isEmpty {
                statements += fold(
                    cohorts, from: "metric_cohort_changes", into: "metric_cohorts", keys: cohortKeys, sums: ["value"],
                    conflict: addCohortConflict)
            }
            return .run(statements) { _ in .done(days.count + cohorts.count) }
        }
    }

    /// Adds the change rows `ids` of `changes` to `rollup`, summed per key, then deletes them.
    private static func fold(
        _ ids: [Int64], from changes: String, into rollup: String, keys: [String], sums: [String], conflict: String
    ) -> [LedgerSQL] {
        let keyList = keys.joined(separator: ", ")
        return [
            """
            INSERT INTO \(unescaped: rollup) (\(unescaped: keyList), \(unescaped: sums.joined(separator: ", ")))
            SELECT \(unescaped: keyList), \(unescaped: sums.map { "SUM(\($0))" }.joined(separator: ", "))
            FROM \(unescaped: changes) WHERE id IN (\(list: ids))
            GROUP BY \(unescaped: keyList) ORDER BY \(unescaped: keyList)
            \(unescaped: conflict)
            """,
            "DELETE FROM \(unescaped: changes) WHERE id IN (\(list: ids))",
        ]
    }
}
