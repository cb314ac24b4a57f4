public import Foundation

/// The rows a store writes to catch up with a ``SandboxState``: for each collection that changed
/// since the last save, the rows to replace or delete, and the state's small scalars (counters and
/// settings) as one row.
///
/// Logs (transactions, updates, notifications, events) have one row per record, keyed by the
/// record's ordinal; maps (testers, subscriptions, pending purchases, …) one row per key. A row's
/// body is the record as JSON.
public struct SandboxStateChanges: Sendable {
    /// How a table's rows are keyed.
    public enum TableKind: Sendable {
        /// By the record's ordinal, in order.
        case log
        /// By a string key.
        case map
    }

    /// A row's key.
    public enum RowKey: Hashable, Sendable {
        /// The ordinal of a log's record.
        case ordinal(Int64)
        /// The key of a map's record.
        case name(String)
    }

    /// One row to write: its new body, or `nil` to delete it.
    public struct Row: Sendable {
        /// Which row.
        public let key: RowKey
        /// The record as JSON; `nil` deletes the row.
        public let body: Data?
    }

    /// The changes of one collection.
    public struct Table: Sendable {
        /// The collection's table, one of ``SandboxStateChanges/tableLayout``'s names.
        public let name: String
        /// Delete every row of the table before writing ``rows``.
        public let dropsAll: Bool
        /// The rows to write or delete, in order.
        public let rows: [Row]
    }

    /// The collections that changed, and only those.
    public let tables: [Table]
    /// The counters and settings, as JSON.
    public let scalars: Data

    /// How many collection rows the changes write or delete (the scalars row not counted).
    public var rowCount: Int { tables.reduce(0) { $0 + $1.rows.count } }

    /// Every collection's table name and kind: what a store creates.
    public static let tableLayout: [(name: String, kind: TableKind)] = {
        var lister = TableLister()
        var state = SandboxState()
        state.visitCollections(&lister)
        return lister.tables
    }()
}

/// A ``RecordLog`` or ``RecordMap``: a collection of the state that keeps a journal of its changes.
protocol JournaledCollection {
    /// What one row holds.
    associatedtype Record: Codable
    static var tableKind: SandboxStateChanges.TableKind { get }
    /// Whether anything changed since the journal was last cleared.
    var hasChanges: Bool { get }
    /// What changed: whether every row was dropped first, then each changed row with its record,
    /// or `nil` for a removed one.
    var journal: (dropAll: Bool, rows: [(key: SandboxStateChanges.RowKey, record: Record?)]) { get }
    /// Forgets what changed, once a store has written it.
    mutating func clearJournal()
    /// Marks everything as unsaved.
    mutating func markAllChanged()
    /// The collection read back from its rows, with nothing unsaved.
    init(restoringRows rows: [(key: SandboxStateChanges.RowKey, record: Record)]) throws
}

extension JournaledCollection {
    /// The rows to write for what changed, each record as JSON.
    func tableChanges(_ name: String, encoder: JSONEncoder) throws -> SandboxStateChanges.Table {
        let journal = self.journal
        return SandboxStateChanges.Table(
            name: name, dropsAll: journal.dropAll,
            rows: try journal.rows.map { try .init(key: $0.key, body: $0.record.map(encoder.encode)) })
    }

    /// Reads the collection back from rows that `read` hands over one at a time.
    init(restoringWith read: RowReader, decoder: JSONDecoder) throws {
        var rows: [(key: SandboxStateChanges.RowKey, record: Record)] = []
        try read { key, body in rows.append((key, try decoder.decode(Record.self, from: body))) }
        try self.init(restoringRows: rows)
    }
}

/// Hands a table's rows, one at a time, to the closure it is given.
typealias RowReader = ((SandboxStateChanges.RowKey, Data) throws -> Void) throws -> Void

/// Something done to each collection of the state in turn.
protocol CollectionVisitor {
    /// What a visit can throw (`Never` for visitors that cannot fail).
    associatedtype Failure: Error
    mutating func visit<Collection: JournaledCollection>(
        _ name: String, _ collection: inout Collection) throws(Failure)
}

extension SandboxState {
    /// Visits each journaled collection, with its table name. The one list of the state's collections.
    mutating func visitCollections<Visitor: CollectionVisitor>(_ visitor: inout Visitor) throws(Visitor.Failure) {
        try visitor.visit("testers", &testers)
        try visitor.visit("transactions", &transactions)
        try visitor.visit("app_downloads", &appDownloads)
        try visitor.visit("subscriptions", &subscriptions)
        try visitor.visit("pending_purchases", &pendingPurchases)
        try visitor.visit("events", &events)
        try visitor.visit("notifications", &notifications)
        try visitor.visit("updates", &updates)
        try visitor.visit("extensions", &extensions)
        try visitor.visit("mass_extensions", &massExtensions)
        try visitor.visit("consumption_reports", &consumptionReports)
        try visitor.visit("offer_codes", &offerCodes)
        try visitor.visit("simulated_errors", &simulatedErrors)
        try visitor.visit("refund_requests", &refundRequests)
        try visitor.visit("offer_keys", &offerKeys)
        try visitor.visit("used_offer_nonces", &usedOfferNonces)
    }

    /// The rows that changed since the journal was last cleared, and the scalars.
    public func changes(encoder: JSONEncoder) throws -> SandboxStateChanges {
        var collector = ChangeCollector(encoder: encoder)
        var copy = self
        try copy.visitCollections(&collector)
        return SandboxStateChanges(tables: collector.tables, scalars: try encoder.encode(Scalars(self)))
    }

    /// Whether any collection changed since the journal was last cleared.
    public var hasUnsavedRows: Bool {
        var checker = ChangeChecker()
        var copy = self
        copy.visitCollections(&checker)
        return checker.found
    }

    /// Forgets what changed: call once a store has written ``changes(encoder:)``.
    public mutating func clearJournal() {
        var clearer = JournalClearer()
        visitCollections(&clearer)
    }

    /// Marks every record as unsaved, so the next ``changes(encoder:)`` rewrites every table whole.
    public mutating func markAllChanged() {
        var marker = ChangeMarker()
        visitCollections(&marker)
    }

    /// Reads a state back from a store: `scalars` as written by ``changes(encoder:)``, and `rows`
    /// handing over each table's rows (logs in any order). Nothing is unsaved afterwards.
    public init(
        restoringScalars scalars: Data, decoder: JSONDecoder,
        rows: @escaping (_ table: String, _ row: (SandboxStateChanges.RowKey, Data) throws -> Void) throws -> Void
    ) throws {
        self.init()
        try decoder.decode(Scalars.self, from: scalars).apply(to: &self)
        var restorer = Restorer(decoder: decoder, rows: rows)
        try visitCollections(&restorer)
    }
}

/// The state's values that are not collections.
private struct Scalars: Codable {
    var nextTransactionNumber: UInt64
    var nextWebOrderLineItemNumber: UInt64
    var nextUpdateSequence: Int
    var settings: SandboxSettings

    init(_ state: SandboxState) {
        nextTransactionNumber = state.nextTransactionNumber
        nextWebOrderLineItemNumber = state.nextWebOrderLineItemNumber
        nextUpdateSequence = state.nextUpdateSequence
        settings = state.settings
    }

    func apply(to state: inout SandboxState) {
        state.nextTransactionNumber = nextTransactionNumber
        state.nextWebOrderLineItemNumber = nextWebOrderLineItemNumber
        state.nextUpdateSequence = nextUpdateSequence
        state.settings = settings
    }
}

private struct TableLister: CollectionVisitor {
    var tables: [(name: String, kind: SandboxStateChanges.TableKind)] = []
    mutating func visit<Collection: JournaledCollection>(_ name: String, _ collection: inout Collection) {
        tables.append((name, Collection.tableKind))
    }
}

private struct ChangeCollector: CollectionVisitor {
    let encoder: JSONEncoder
    var tables: [SandboxStateChanges.Table] = []
    mutating func visit<Collection: JournaledCollection>(_ name: String, _ collection: inout Collection) throws(any Error) {
        guard collection.hasChanges else { return }
        tables.append(try collection.tableChanges(name, encoder: encoder))
    }
}

private struct ChangeChecker: CollectionVisitor {
    var found = false
    mutating func visit<Collection: JournaledCollection>(_ name: String, _ collection: inout Collection) {
        found = found || collection.hasChanges
    }
}

private struct JournalClearer: CollectionVisitor {
    mutating func visit<Collection: JournaledCollection>(_ name: String, _ collection: inout Collection) {
        collection.clearJournal()
    }
}

private struct ChangeMarker: CollectionVisitor {
    mutating func visit<Collection: JournaledCollection>(_ name: String, _ collection: inout Collection) {
        collection.markAllChanged()
    }
}

private struct Restorer: CollectionVisitor {
    let decoder: JSONDecoder
    let rows: (String, (SandboxStateChanges.RowKey, Data) throws -> Void) throws -> Void
    mutating func visit<Collection: JournaledCollection>(_ name: String, _ collection: inout Collection) throws(any Error) {
        collection = try Collection(restoringWith: { try rows(name, $0) }, decoder: decoder)
    }
}

/// A row that does not fit its table: a log row without an ordinal, a map row without a key.
struct SandboxRowError: Error, CustomStringConvertible {
    let table: String
    var description: String { "a row of the sandbox's \(table) table has the wrong kind of key" }
}

extension RecordLog: JournaledCollection {
    static var tableKind: SandboxStateChanges.TableKind { .log }

    init(restoringRows rows: [(key: SandboxStateChanges.RowKey, record: Element)]) throws {
        self.init(
            restoring: try rows.map { row in
                guard case .ordinal(let ordinal) = row.key else { throw SandboxRowError(table: "\(Element.self)") }
                return (ordinal, row.record)
            })
    }
}

extension RecordMap: JournaledCollection {
    static var tableKind: SandboxStateChanges.TableKind { .map }

    init(restoringRows rows: [(key: SandboxStateChanges.RowKey, record: Value)]) throws {
        var values: [String: Value] = [:]
        for row in rows {
            guard case .name(let name) = row.key else { throw SandboxRowError(table: "\(Value.self)") }
            values[name] = row.record
        }
        self.init(restoring: values)
    }
}
