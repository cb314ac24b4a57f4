import Foundation

/// The rows a statement returned, decoded by the engine that read them into types whose coding
/// keys are the columns.
protocol LedgerRowSet {
    /// How many rows there are (with `RETURNING`, how many the statement changed).
    var count: Int { get }
    /// Every row as `R`.
    func decode<R: Decodable>(_ type: R.Type) throws -> [R]
}

extension LedgerRowSet {
    var isEmpty: Bool { count == 0 }

    /// The first row as `R`, if any.
    func first<R: Decodable>(_ type: R.Type) throws -> R? {
        try decode(type).first
    }
}

/// A write transaction, decided by the ledger's own code and executed by either engine: run
/// some statements, in order, then decide from the rows they returned what comes next, until
/// it is done. Everything runs in one database transaction; a throw rolls all of it back.
indirect enum LedgerTransaction<Output: Sendable>: Sendable {
    /// Runs the statements, then goes on with what `then` makes of their rows.
    case run([LedgerSQL], then: @Sendable ([any LedgerRowSet]) throws -> LedgerTransaction<Output>)
    /// The transaction's answer; it commits.
    case done(Output)
}

extension LedgerTransaction {
    /// This transaction, then what `next` makes of its answer, in the same database transaction.
    func then<Next: Sendable>(
        _ next: @escaping @Sendable (Output) throws -> LedgerTransaction<Next>
    ) -> LedgerTransaction<Next> {
        switch self {
        case .done(let value):
            .run([]) { _ in try next(value) }
        case .run(let statements, let step):
            .run(statements) { rows in try step(rows).then(next) }
        }
    }
}

/// A row of either engine, read by column name (``ColumnDecoder``).
protocol ColumnRow {
    var names: [String] { get }
    func contains(_ column: String) -> Bool
    func isNull(_ column: String) -> Bool
    func text(_ column: String) throws -> String
    func integer(_ column: String) throws -> Int64
    /// The column as `T`, or `nil` when the engine has no decoder for `T`.
    func value<T>(_ type: T.Type, _ column: String) throws -> T?
}

/// Decodes a type whose coding keys are column names (``TransactionRow``) from a row, each
/// column with the engine's own decoder for its Swift type. (Cheaper than GRDB's decoder for
/// records, which builds a container per row and looks every type up.)
struct ColumnDecoder<Row: ColumnRow>: Decoder {
    let row: Row
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Columns(row: row))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw columnsOnly }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw columnsOnly }

    struct Columns<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let row: Row
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { row.names.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { row.contains(key.stringValue) }
        func decodeNil(forKey key: Key) throws -> Bool { row.isNull(key.stringValue) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try row.text(key.stringValue) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try row.integer(key.stringValue) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { Int(try row.integer(key.stringValue)) }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            guard let value = try row.value(T.self, key.stringValue) else {
                throw DecodingError.typeMismatch(T.self, .init(codingPath: [key], debugDescription: "not a column type"))
            }
            return value
        }

        func nestedContainer<Nested: CodingKey>(
            keyedBy type: Nested.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<Nested> { throw columnsOnly }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw columnsOnly }
        func superDecoder() throws -> any Decoder { throw columnsOnly }
        func superDecoder(forKey key: Key) throws -> any Decoder { throw columnsOnly }
    }
}

/// What ``ColumnDecoder`` throws for a shape a row cannot hold.
private let columnsOnly = DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "a row has columns only"))

/// A column read as `value` (`SELECT … AS value`), for statements that return one.
struct LedgerColumn<Value: Decodable & Sendable>: Decodable, Sendable {
    var value: Value
}

/// What the two engines do for the statements defined once (``LedgerSQL``): read one on any
/// connection, and run a write transaction (``LedgerTransaction``) as their writes run.
protocol StatementEngine: Sendable {
    /// The rows of one statement, read on any connection, as `R`.
    func read<R: Decodable & Sendable>(_ statement: LedgerSQL, as type: R.Type) async throws -> [R]

    /// Runs `transaction`, which only reads, on one snapshot of the database: its statements see
    /// the same committed state.
    func snapshot<Output: Sendable>(_ transaction: LedgerTransaction<Output>) async throws -> Output

    /// Runs `transaction` as one write transaction, durable when it returns. `customer` names the
    /// customer it writes for, when it writes for one: an engine with several writers keeps one
    /// customer's writes on one of them.
    func perform<Output: Sendable>(for customer: String?, _ transaction: LedgerTransaction<Output>) async throws
        -> Output

    /// Runs `transaction` as ``perform(for:_:)`` does, then applies what it changed in the daily
    /// figures and the metrics kept in the write (``PurchaseChanges``), in the same write.
    func perform<Output: Sendable>(
        for customer: String?, changing transaction: LedgerTransaction<(Output, PurchaseChanges)>
    ) async throws -> Output
}

extension StatementEngine {
    /// The value of the first row's `value` column, if there is a row.
    func value<Value: Decodable & Sendable>(_ statement: LedgerSQL, as type: Value.Type) async throws -> Value? {
        try await read(statement, as: LedgerColumn<Value>.self).first?.value
    }

    /// Runs one statement as a write; the number of rows it returned (with `RETURNING`, the rows it changed).
    @discardableResult
    func write(for customer: String? = nil, _ statement: LedgerSQL) async throws -> Int {
        try await perform(for: customer, .run([statement]) { .done($0[0].count) })
    }

    /// Runs one statement as a write; its rows as `R`.
    func write<R: Decodable & Sendable>(
        for customer: String? = nil, _ statement: LedgerSQL, returning type: R.Type
    ) async throws -> [R] {
        try await perform(for: customer, .run([statement]) { .done(try $0[0].decode(R.self)) })
    }
}
