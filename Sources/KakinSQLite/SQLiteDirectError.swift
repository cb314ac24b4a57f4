/// A failed SQLite call, with SQLite's message and the start of the statement.
///
/// A busy, locked, full or broken database is ``Code/unavailable``: trying again later may work.
/// Anything else (a constraint, a syntax error, a misuse) is ``Code/failed`` and will fail again.
public struct SQLiteDirectError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: String, Hashable, Sendable {
        /// The database cannot be reached or written now (busy, locked, I/O, disk full, cannot
        /// open, out of memory): worth retrying.
        case unavailable
        /// Any other failure: retrying the same call fails the same way.
        case failed
    }

    public let code: Code
    /// SQLite's message, with the statement that failed.
    public let message: String
    /// SQLite's extended result code, when SQLite returned one.
    public let status: Int32?

    public init(_ code: Code, _ message: String, status: Int32? = nil) {
        self.code = code
        self.message = message
        self.status = status
    }

    /// Whether trying again later may succeed.
    public var isRetryable: Bool { code == .unavailable }

    public var description: String { message }
}
