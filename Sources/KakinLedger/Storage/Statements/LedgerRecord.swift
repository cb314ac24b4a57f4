import Foundation

/// A row of one of the ledger's tables, as both engines write and read it: its coding keys are
/// the table's columns, declared once. Statements list the columns from ``columns`` and insert
/// whole rows with `\(insert:)`; a test checks each record's columns against the table the
/// migrations build, so adding a column means a migration, a property here and the statements
/// that use it.
protocol LedgerRecord: Codable, Sendable {
    associatedtype Columns: CodingKey & CaseIterable & RawRepresentable<String>
    /// The table the record is a row of.
    static var table: String { get }
    /// The columns the database fills in on insert (a generated key), left out of `\(insert:)`.
    static var generatedColumns: Set<String> { get }
    /// The columns the table has on `dialect` only, which the record leaves out: the database
    /// fills them in, and only that engine's own statements read them.
    static func engineColumns(on dialect: LedgerSQLDialect) -> Set<String>
}

extension LedgerRecord {
    static var generatedColumns: Set<String> { [] }
    static func engineColumns(on dialect: LedgerSQLDialect) -> Set<String> { [] }

    /// Every column, in declaration order.
    static var columns: [String] { Columns.allCases.map(\.rawValue) }

    /// The columns `\(insert:)` writes (all but the generated ones), as a statement lists them.
    static var insertedColumns: String {
        columns.filter { !generatedColumns.contains($0) }.joined(separator: ", ")
    }

    /// The columns as a `SELECT` lists them; `prefix` qualifies each (`t.` for `t.id`).
    static func selection(_ prefix: String = "") -> String {
        columns.map { prefix + $0 }.joined(separator: ", ")
    }

    /// The record's columns and values, in the order it encodes them.
    func columnValues() throws -> [(column: String, value: LedgerValue)] {
        let encoder = ColumnEncoder()
        try encode(to: encoder)
        if let refused = encoder.values.refused {
            throw EncodingError.invalidValue(
                self, .init(codingPath: [], debugDescription: "\(Self.self) holds \(refused); a row has columns only"))
        }
        return encoder.values.values
    }
}

extension LedgerSQL.StringInterpolation {
    /// `table (columns…) VALUES (binds…)` for a whole row, as `INSERT INTO \(insert: row)` writes it.
    mutating func appendInterpolation<Record: LedgerRecord>(insert record: Record) throws {
        try appendInterpolation(insert: [record])
    }

    /// `table (columns…)` and the rows (``LedgerSQL/StringInterpolation/appendInterpolation(values:)``)
    /// for whole rows (at least one), as `INSERT INTO \(insert: rows)` writes them.
    mutating func appendInterpolation<Record: LedgerRecord>(insert records: [Record]) throws {
        let generated = Record.generatedColumns
        let rows = try records.map { try $0.columnValues().filter { !generated.contains($0.column) } }
        let columns = rows.first?.map(\.column) ?? []
        appendInterpolation(unescaped: "\(Record.table) (\(columns.joined(separator: ", "))) ")
        appendInterpolation(values: rows.map { $0.map(\.value) })
    }
}

/// A record whose rows the writes every purchase makes bind by hand rather than through
/// `\(insert:)`, which encodes each row: ``boundValues`` are its values in the order of
/// ``boundColumns``, built directly. A test holds the two to what `\(insert:)` encodes, so the
/// record stays the one declaration of the table's columns.
protocol BoundRecord: LedgerRecord {
    /// The columns the writes list (``LedgerRecord/insertedColumns``), made once.
    static var boundColumns: String { get }
    /// The row's values, in the order of ``boundColumns``.
    var boundValues: [LedgerValue] { get }
}

/// The names of a record's columns, listed at run time: the day rollups have one per ``MetricColumn``.
protocol NamedColumns: Sendable {
    static var columnNames: [String] { get }
}

/// A column of a record whose columns are listed at run time (``NamedColumns``).
struct NamedColumn<Record: NamedColumns>: CodingKey, CaseIterable, RawRepresentable, ExpressibleByStringLiteral,
    Sendable
{
    let rawValue: String

    init(rawValue: String) { self.rawValue = rawValue }
    init(stringLiteral value: String) { rawValue = value }
    init?(stringValue: String) { rawValue = stringValue }
    init?(intValue: Int) { nil }

    var stringValue: String { rawValue }
    var intValue: Int? { nil }

    static var allCases: [Self] { Record.columnNames.map(Self.init(rawValue:)) }
}

extension LedgerValue: LedgerBindable {
    var ledgerValue: LedgerValue { self }
}

/// Collects a record's values by column (``LedgerRecord/columnValues()``); a `nil` optional is `NULL`.
/// A record is flat: a nested, unkeyed or single value is refused with an error when
/// ``LedgerRecord/columnValues()`` returns, whatever was encoded into it.
private final class ColumnEncoder: Encoder {
    final class Values {
        var values: [(column: String, value: LedgerValue)] = []
        /// What the record asked for that a row cannot hold, if anything.
        var refused: String?

        func refuse(_ shape: String) -> Values {
            refused = refused ?? shape
            return Values()
        }
    }

    let values = Values()
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Columns(values: values))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { Refused(values: values.refuse("a list")) }
    func singleValueContainer() -> any SingleValueEncodingContainer { Refused(values: values.refuse("a single value")) }

    struct Columns<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let values: Values
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { values.values.append((key.stringValue, .null)) }
        mutating func encode(_ value: String, forKey key: Key) throws {
            values.values.append((key.stringValue, .text(value)))
        }
        mutating func encode(_ value: Int64, forKey key: Key) throws {
            values.values.append((key.stringValue, .integer(value)))
        }
        mutating func encode(_ value: Int, forKey key: Key) throws {
            values.values.append((key.stringValue, .integer(Int64(value))))
        }
        mutating func encode(_ value: Bool, forKey key: Key) throws {
            values.values.append((key.stringValue, .integer(value ? 1 : 0)))
        }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            guard let bindable = value as? any LedgerBindable else {
                throw EncodingError.invalidValue(
                    value, .init(codingPath: [key], debugDescription: "\(T.self) is not a column type"))
            }
            values.values.append((key.stringValue, bindable.ledgerValue))
        }
        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
            values.values.append((key.stringValue, value.ledgerValue))
        }
        mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
            values.values.append((key.stringValue, value.ledgerValue))
        }
        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
            values.values.append((key.stringValue, value.ledgerValue))
        }
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            guard let value else { return values.values.append((key.stringValue, .null)) }
            try encode(value, forKey: key)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Columns<NestedKey>(values: values.refuse("a nested value")))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Refused(values: values.refuse("a nested list"))
        }
        mutating func superEncoder() -> any Encoder { Refusing(values: values.refuse("a superclass")) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { Refusing(values: values.refuse("a superclass")) }
    }

    /// What a record gets for a shape a row cannot hold: it takes anything and keeps nothing; the
    /// refusal is thrown once the record is encoded.
    struct Refused: UnkeyedEncodingContainer, SingleValueEncodingContainer {
        let values: Values
        var codingPath: [any CodingKey] { [] }
        var count: Int { 0 }

        mutating func encodeNil() throws {}
        mutating func encode<T: Encodable>(_ value: T) throws {}
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
            -> KeyedEncodingContainer<NestedKey>
        { KeyedEncodingContainer(Columns<NestedKey>(values: values)) }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
        mutating func superEncoder() -> any Encoder { Refusing(values: values) }
    }

    /// The encoder a refused shape's nested values go to.
    struct Refusing: Encoder {
        let values: Values
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Columns(values: values))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer { Refused(values: values) }
        func singleValueContainer() -> any SingleValueEncodingContainer { Refused(values: values) }
    }
}
