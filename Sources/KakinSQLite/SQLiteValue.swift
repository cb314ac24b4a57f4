public import Foundation

/// A value as SQLite stores it.
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

/// The rows one statement returned, with the result's column names.
public struct SQLiteDirectResult: Sendable, Hashable {
    /// The column names, in order (empty when no row came).
    public let columns: [String]
    /// The rows, each with one value per column.
    public let rows: [[SQLiteValue]]

    public init(columns: [String], rows: [[SQLiteValue]]) {
        self.columns = columns
        self.rows = rows
    }
}
