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
}

extension LedgerRecord {
    static var generatedColumns: Set<String> { [] }

    /// Every column, in declaration order.
    static var columns: [String] { Columns.allCases.map(\.rawValue) }

    /// The columns as a `SELECT` lists them; `prefix` qualifies each (`t.` for `t.id`).
    static func selection(_ prefix: String = "") -> String {
        columns.map { prefix + $0 }.joined(separator: ", ")
    }

    /// The record's values by column.
    func values() throws -> [String: LedgerValue] {
        let encoder = ColumnEncoder()
        try encode(to: encoder)
        return encoder.values.values
    }
}

extension LedgerSQL.StringInterpolation {
    /// `table (columns…) VALUES (binds…)` for a whole row, as `INSERT INTO \(insert: row)` writes it.
    mutating func appendInterpolation<Record: LedgerRecord>(insert record: Record) throws {
        let values = try record.values()
        let columns = Record.columns.filter { !Record.generatedColumns.contains($0) }
        appendInterpolation(unescaped: "\(Record.table) (\(columns.joined(separator: ", "))) VALUES (")
        for (index, column) in columns.enumerated() {
            if index > 0 { appendLiteral(", ") }
            appendInterpolation(values[column] ?? .null)
        }
        appendLiteral(")")
    }
}

extension LedgerValue: LedgerBindable {
    var ledgerValue: LedgerValue { self }
}

/// Collects a record's values by column (``LedgerRecord/values()``); a `nil` optional is `NULL`.
private final class ColumnEncoder: Encoder {
    final class Values {
        var values: [String: LedgerValue] = [:]
    }

    let values = Values()
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Columns(values: values))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { fatalError("a row has columns only") }
    func singleValueContainer() -> any SingleValueEncodingContainer { fatalError("a row has columns only") }

    struct Columns<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let values: Values
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { values.values[key.stringValue] = .null }
        mutating func encode(_ value: String, forKey key: Key) throws { values.values[key.stringValue] = .text(value) }
        mutating func encode(_ value: Int64, forKey key: Key) throws {
            values.values[key.stringValue] = .integer(value)
        }
        mutating func encode(_ value: Int, forKey key: Key) throws {
            values.values[key.stringValue] = .integer(Int64(value))
        }
        mutating func encode(_ value: Bool, forKey key: Key) throws {
            values.values[key.stringValue] = .integer(value ? 1 : 0)
        }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            guard let bindable = value as? any LedgerBindable else {
                throw EncodingError.invalidValue(
                    value, .init(codingPath: [key], debugDescription: "\(T.self) is not a column type"))
            }
            values.values[key.stringValue] = bindable.ledgerValue
        }
        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
            values.values[key.stringValue] = value.ledgerValue
        }
        mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
            values.values[key.stringValue] = value.ledgerValue
        }
        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
            values.values[key.stringValue] = value.ledgerValue
        }
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            guard let value else { return values.values[key.stringValue] = .null }
            try encode(value, forKey: key)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> { fatalError("a row has columns only") }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            fatalError("a row has columns only")
        }
        mutating func superEncoder() -> any Encoder { fatalError("a row has columns only") }
        mutating func superEncoder(forKey key: Key) -> any Encoder { fatalError("a row has columns only") }
    }
}
