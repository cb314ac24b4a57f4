import Foundation

/// A value bound to a statement, in the few types the ledger's columns hold.
enum LedgerValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case text(String)
    case bytes(Data)

    /// The type of a value that is not `NULL`.
    enum Kind: Sendable, Hashable {
        case integer
        case text
        case bytes
    }

    /// This value's type; `nil` for `NULL`.
    var kind: Kind? {
        switch self {
        case .null: nil
        case .integer: .integer
        case .text: .text
        case .bytes: .bytes
        }
    }
}

extension LedgerValue.Kind {
    /// PostgreSQL's array of values of this type.
    var postgresArray: String {
        switch self {
        case .integer: "BIGINT[]"
        case .text: "TEXT[]"
        case .bytes: "BYTEA[]"
        }
    }
}

/// What a statement rendered for an engine binds, in order (``LedgerSQL/rendered(for:)``).
enum LedgerBind: Sendable, Hashable {
    /// One value.
    case value(LedgerValue)
    /// A column of a group of rows, as one array whose elements are of `kind` or `NULL`:
    /// PostgreSQL only (``LedgerSQL/StringInterpolation/appendInterpolation(values:)``).
    case column([LedgerValue], of: LedgerValue.Kind)
}

/// A Swift value a statement can bind.
protocol LedgerBindable {
    /// The value as the statement binds it.
    var ledgerValue: LedgerValue { get }
}

extension String: LedgerBindable {
    var ledgerValue: LedgerValue { .text(self) }
}

extension Int64: LedgerBindable {
    var ledgerValue: LedgerValue { .integer(self) }
}

extension Int: LedgerBindable {
    var ledgerValue: LedgerValue { .integer(Int64(self)) }
}

extension Data: LedgerBindable {
    var ledgerValue: LedgerValue { .bytes(self) }
}

extension Date: LedgerBindable {
    /// An instant binds as the ledger stores it: milliseconds since 1970 (``LedgerTime``).
    var ledgerValue: LedgerValue { .integer(LedgerTime.milliseconds(self)) }
}

extension Optional: LedgerBindable where Wrapped: LedgerBindable {
    var ledgerValue: LedgerValue { self?.ledgerValue ?? .null }
}

/// One SQL statement, written once for both engines.
///
/// Values are interpolated as binds (`\(bundleID)`), never as text; each engine renders them its
/// own way (`?` for SQLite, `$1…` for PostgreSQL), and the few words the two engines spell
/// differently are named (``LedgerSQLDialect/Word``). Text known at compile time (a column list)
/// goes in with `\(unescaped:)`; an optional equality filter with `\(where:)`; an `IN` list with
/// `\(list:)`; the rows of a `VALUES` list with `\(rows:)`, and rows as a query (an `INSERT`'s, a
/// `WITH` clause's) with `\(values:)`.
struct LedgerSQL: Sendable, ExpressibleByStringInterpolation {
    enum Part: Sendable, Hashable {
        case text(String)
        case value(LedgerValue)
        case word(LedgerSQLDialect.Word)
        /// Rows as a query (``StringInterpolation/appendInterpolation(values:)``).
        case rows([[LedgerValue]])
    }

    private(set) var parts: [Part]
    /// For a statement made of several writes (``writes(_:)``): those writes, for an engine
    /// that runs them one after another; empty for any other statement.
    private(set) var writes: [LedgerSQL] = []

    init(stringLiteral value: String) {
        parts = [.text(value)]
    }

    init(stringInterpolation: StringInterpolation) {
        parts = stringInterpolation.parts
    }

    private init(parts: [Part], writes: [LedgerSQL]) {
        self.parts = parts
        self.writes = writes
    }

    struct StringInterpolation: StringInterpolationProtocol {
        fileprivate var parts: [Part] = []

        init(literalCapacity: Int, interpolationCount: Int) {
            parts.reserveCapacity(interpolationCount * 2 + 1)
        }

        mutating func appendLiteral(_ literal: String) {
            guard !literal.isEmpty else { return }
            parts.append(.text(literal))
        }

        /// A bound value.
        mutating func appendInterpolation(_ value: some LedgerBindable) {
            parts.append(.value(value.ledgerValue))
        }

        /// A bound value that may be `NULL`.
        mutating func appendInterpolation<Value: LedgerBindable>(_ value: Value?) {
            parts.append(.value(value.ledgerValue))
        }

        /// Text written into the statement as it is: column lists and other constants, never input.
        mutating func appendInterpolation(unescaped text: String) {
            parts.append(.text(text))
        }

        /// A word the engines spell differently.
        mutating func appendInterpolation(_ word: LedgerSQLDialect.Word) {
            parts.append(.word(word))
        }

        /// Another statement's parts, in place.
        mutating func appendInterpolation(_ fragment: LedgerSQL) {
            parts.append(contentsOf: fragment.parts)
        }

        /// The values of an `IN (…)` list, one bind each; an empty list is `NULL` (which matches nothing).
        mutating func appendInterpolation(list values: [some LedgerBindable]) {
            guard !values.isEmpty else { return parts.append(.text("NULL")) }
            for (index, value) in values.enumerated() {
                if index > 0 { parts.append(.text(", ")) }
                parts.append(.value(value.ledgerValue))
            }
        }

        /// The rows of a `VALUES` list, `(…), (…)`, one bind per value; every row has the same
        /// number of values, and there is at least one row.
        mutating func appendInterpolation(rows: some Collection<[LedgerValue]>) {
            for (index, row) in rows.enumerated() {
                parts.append(.text(index > 0 ? ", (" : "("))
                appendInterpolation(list: row)
                parts.append(.text(")"))
            }
        }

        /// Rows as a query, for an `INSERT` after its column list or a `WITH` clause, every row
        /// with the same number of values, at least one row: `VALUES (…), (…)`, one bind per
        /// value, on SQLite; on PostgreSQL, each column bound as one array, `SELECT … FROM
        /// unnest($1::BIGINT[], …)`, so that the statement's text, and the work of parsing and
        /// planning it, stays the same whatever the number of rows. A column whose values are all
        /// `NULL` is written as `NULL`, which an `INSERT` gives the type of the column it goes into
        /// (elsewhere it is text: a `WITH` clause's rows have no such column); a column whose
        /// values are of different types is bound value by value, as `VALUES`.
        mutating func appendInterpolation(values rows: some Collection<[LedgerValue]>) {
            parts.append(.rows(Array(rows)))
        }

        /// `WHERE` with an equality for each column whose value is given, or nothing when none is.
        mutating func appendInterpolation(where filters: KeyValuePairs<String, String?>) {
            var first = true
            for (column, value) in filters {
                guard let value else { continue }
                parts.append(.text(first ? "WHERE \(column) = " : " AND \(column) = "))
                parts.append(.value(.text(value)))
                first = false
            }
        }
    }

    /// How many values the statement binds.
    var bindCount: Int {
        parts.reduce(0) { count, part in
            switch part {
            case .value: count + 1
            case .rows(let rows): count + rows.count * (rows.first?.count ?? 0)
            case .text, .word: count
            }
        }
    }

    /// Writes run in order: on PostgreSQL as few statements as possible (the writes before the
    /// last of each become data-modifying `WITH` queries, one round trip instead of several), each
    /// within PostgreSQL's limit of binds; SQLite runs each write of them in turn. Only the last
    /// write may return rows (a `RETURNING` clause): they are the last statement's rows. No two of
    /// the writes may change the same row, and none reads what another writes.
    static func writes(_ statements: [LedgerSQL]) -> [LedgerSQL] {
        var combined: [LedgerSQL] = []
        var group: [LedgerSQL] = []
        var binds = 0
        func close() {
            guard let last = group.last else { return }
            var parts: [Part] = []
            for (index, write) in group.dropLast().enumerated() {
                parts.append(.text(index == 0 ? "WITH w\(index) AS (" : ", w\(index) AS ("))
                parts += write.parts
                parts.append(.text(")\n"))
            }
            combined.append(LedgerSQL(parts: parts + last.parts, writes: group))
            group = []
            binds = 0
        }
        for statement in statements {
            let count = statement.bindCount
            if !group.isEmpty && binds + count > maximumBinds { close() }
            group.append(statement)
            binds += count
        }
        close()
        return combined
    }

    /// The type of each column of `rows` (`nil` for a column whose values are all `NULL`), when
    /// PostgreSQL can bind each column as one array: every value of a column of one type or
    /// `NULL`, and at least one column not all `NULL`.
    private static func columnKinds(_ rows: [[LedgerValue]]) -> [LedgerValue.Kind?]? {
        guard let first = rows.first else { return nil }
        var kinds = [LedgerValue.Kind?](repeating: nil, count: first.count)
        for row in rows {
            guard row.count == kinds.count else { return nil }
            for (column, value) in row.enumerated() {
                guard let kind = value.kind else { continue }
                if let known = kinds[column], known != kind { return nil }
                kinds[column] = kind
            }
        }
        return kinds.contains { $0 != nil } ? kinds : nil
    }

    /// The most values one statement binds: PostgreSQL's protocol counts them in 16 bits, and
    /// SQLite allows 32,766.
    static let maximumBinds = 30_000

    /// The statement's text for `dialect`, with its binds in order.
    func rendered(for dialect: LedgerSQLDialect) -> (sql: String, values: [LedgerBind]) {
        var sql = ""
        sql.reserveCapacity(parts.count * 16)
        var values: [LedgerBind] = []
        values.reserveCapacity(parts.count / 2)
        func bind(_ value: LedgerBind) {
            values.append(value)
            sql += dialect == .sqlite ? "?" : "$\(values.count)"
        }
        for part in parts {
            switch part {
            case .text(let text): sql += text
            case .word(let word): sql += dialect.spelling(word)
            case .value(let value): bind(.value(value))
            case .rows(let rows):
                guard dialect == .postgresql, let kinds = Self.columnKinds(rows) else {
                    sql += "VALUES "
                    for (index, row) in rows.enumerated() {
                        sql += index > 0 ? ", (" : "("
                        for (column, value) in row.enumerated() {
                            if column > 0 { sql += ", " }
                            bind(.value(value))
                        }
                        sql += ")"
                    }
                    continue
                }
                let bound = kinds.indices.filter { kinds[$0] != nil }
                sql += "SELECT " + kinds.indices.map { kinds[$0] == nil ? "NULL" : "u.c\($0)" }.joined(separator: ", ")
                sql += " FROM unnest("
                for (index, column) in bound.enumerated() {
                    guard let kind = kinds[column] else { continue }
                    if index > 0 { sql += ", " }
                    bind(.column(rows.map { $0[column] }, of: kind))
                    sql += "::" + kind.postgresArray
                }
                sql += ") AS u(" + bound.map { "c\($0)" }.joined(separator: ", ") + ")"
            }
        }
        return (sql, values)
    }
}

extension LedgerSQLDialect {
    /// A word of a statement that the two engines spell differently.
    enum Word: Sendable, Hashable {
        /// The larger of two values (`MAX(a, b)` / `GREATEST(a, b)`), followed by its parentheses.
        case greatest
        /// The smaller of two values (`MIN(a, b)` / `LEAST(a, b)`), followed by its parentheses.
        case least
        /// After `events e.`: the column that places an event in the outbox's order. SQLite's one
        /// writer writes events in the order of their IDs (`id`); on PostgreSQL they become visible
        /// in the order their transactions commit, and are placed by the transaction that wrote
        /// them (`xid`).
        case eventPosition
        /// An event position (``eventPosition``) as a constant: `n`, or `'n'::xid8`.
        case position(UInt64)
        /// The position below which every event is final, no event being written below it again:
        /// past the last event on SQLite, the oldest running transaction on PostgreSQL.
        case finalPositions
        /// After a `SELECT` that picks rows to claim: rows another transaction holds are passed
        /// over (PostgreSQL's `FOR UPDATE SKIP LOCKED`). SQLite has one writer at a time and
        /// needs nothing.
        case skipLocked
        /// After a `SELECT` of rows the write goes on to change: they are locked until it commits
        /// (PostgreSQL's `FOR UPDATE`). SQLite has one writer at a time and needs nothing.
        case forUpdate
        /// An inner join whose left table is read first: SQLite's planner keeps a `CROSS JOIN`'s
        /// order; PostgreSQL plans a `JOIN` from its statistics.
        case joinInOrder
        /// After a text expression: compared byte by byte (UTF-8), as a range of prefixes walking
        /// an index needs (SQLite compares so by default; PostgreSQL's `COLLATE "C"`).
        case bytewise
        /// `LIKE` that ignores the case of letters (SQLite's `LIKE`, for ASCII letters; `ILIKE`).
        case likeIgnoringCase
        /// After a table in `FROM`: read through the named index (SQLite's `INDEXED BY`), or,
        /// with `nil`, in the table's own order (`NOT INDEXED`), where SQLite's planner, which has
        /// no statistics, would choose worse: an equality on an index's first column looks
        /// selective to it even when every row has the same value. PostgreSQL plans from its
        /// statistics.
        case index(String?)
        /// An expression, in a row with the columns `bundle_id`, `environment` and `customer`, that
        /// takes a lock on that customer's metrics until the transaction ends: PostgreSQL's
        /// writers change customers concurrently, and take these locks in key order before they
        /// read the customers' states. SQLite has one writer at a time: `0`.
        case customerLock
    }

    /// How this engine spells `word`.
    func spelling(_ word: Word) -> String {
        switch (word, self) {
        case (.greatest, .sqlite): "MAX"
        case (.greatest, .postgresql): "GREATEST"
        case (.least, .sqlite): "MIN"
        case (.least, .postgresql): "LEAST"
        case (.eventPosition, .sqlite): "id"
        case (.eventPosition, .postgresql): "xid"
        case (.position(let position), .sqlite): "\(position)"
        case (.position(let position), .postgresql): "'\(position)'::xid8"
        case (.finalPositions, .sqlite): "(SELECT COALESCE(MAX(id), 0) + 1 FROM events)"
        case (.finalPositions, .postgresql): "pg_snapshot_xmin(pg_current_snapshot())"
        case (.skipLocked, .sqlite): ""
        case (.skipLocked, .postgresql): "FOR UPDATE SKIP LOCKED"
        case (.forUpdate, .sqlite): ""
        case (.forUpdate, .postgresql): "FOR UPDATE"
        case (.joinInOrder, .sqlite): "CROSS JOIN"
        case (.joinInOrder, .postgresql): "JOIN"
        case (.bytewise, .sqlite): ""
        case (.bytewise, .postgresql): " COLLATE \"C\""
        case (.likeIgnoringCase, .sqlite): "LIKE"
        case (.likeIgnoringCase, .postgresql): "ILIKE"
        case (.index(let name?), .sqlite): "INDEXED BY \(name)"
        case (.index(nil), .sqlite): "NOT INDEXED"
        case (.index, .postgresql): ""
        case (.customerLock, .sqlite): "0"
        case (.customerLock, .postgresql):
            "pg_advisory_xact_lock(\(PostgresLedger.Lock.customerScope), "
                + "hashtext(bundle_id || chr(10) || environment || chr(10) || customer))"
        }
    }
}
