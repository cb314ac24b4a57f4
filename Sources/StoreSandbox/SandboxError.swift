/// The one error type of StoreSandbox: a code to switch on and a message for people.
public struct SandboxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case unknownTester, unknownTransaction, unknownPendingPurchase, invalidRequest, stateUnavailable
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// No tester has this ID.
        public static let unknownTester = Code(.unknownTester)
        /// No transaction has this ID (for this tester).
        public static let unknownTransaction = Code(.unknownTransaction)
        /// No pending purchase has this ID.
        public static let unknownPendingPurchase = Code(.unknownPendingPurchase)
        /// The request is not acceptable (a quantity below 1, a storefront that does not exist, …).
        public static let invalidRequest = Code(.invalidRequest)
        /// The state could not be saved or read.
        public static let stateUnavailable = Code(.stateUnavailable)

        public var description: String { base.rawValue }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
    public var description: String { "\(code): \(message)" }
}
