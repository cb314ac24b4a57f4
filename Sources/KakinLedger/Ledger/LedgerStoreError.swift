/// The one error type of the ledger storage.
///
/// Every failure has a ``code`` a program can switch on and a ``message`` a developer can read.
/// Two errors compare equal when their codes are equal, so tests can write
/// `#expect(throws: LedgerStoreError(.invalidArgument))` without repeating the message.
///
/// Errors raised by the database driver itself (a lost connection, a full disk, a constraint the
/// caller broke) are passed through unchanged; these codes are for what the store decides.
public struct LedgerStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable, machine-readable value.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidArgument
            case idempotencyKeyReused
            case contentVersionConflict
            case inconsistentState
            case unavailable
            case inUse
            case diskFull
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The request cannot be applied as given: a negative amount, an empty key, a quantity
        /// below one, a content package whose size or hash does not match its bytes. Permanent.
        public static let invalidArgument = Code(.invalidArgument)
        /// A spend reused an idempotency key that was already used for a different spend
        /// (another customer, currency or amount). Permanent: the caller must pick a new key.
        public static let idempotencyKeyReused = Code(.idempotencyKeyReused)
        /// A content package version was uploaded again with different bytes; versions are immutable.
        public static let contentVersionConflict = Code(.contentVersionConflict)
        /// The database holds something the store never writes (a row that should exist is missing).
        /// The operation was rolled back; retrying may succeed if another writer was mid-way.
        public static let inconsistentState = Code(.inconsistentState)
        /// The store was shut down, or its database is not reachable. Retryable on a new store.
        public static let unavailable = Code(.unavailable)
        /// The operation needs the ledger to itself (a restore), and a server or another
        /// connection has it open. Retry once every server using it has stopped.
        public static let inUse = Code(.inUse)
        /// The database's disk is full: the write was not made (nothing of it is kept). Retryable
        /// once space is freed.
        public static let diskFull = Code(.diskFull)

        /// The code's name, such as `invalidArgument`.
        public var description: String { base.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence saying what went wrong, for a developer.
    public let message: String
    /// Which rule the request broke, as a stable word a program can switch on (such as
    /// `notAnonymous`); `nil` when the code says enough. It does not take part in equality.
    public let cause: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String = "", cause: String? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// One line: the code, then the message when there is one.
    public var description: String { message.isEmpty ? code.description : "\(code): \(message)" }
}
