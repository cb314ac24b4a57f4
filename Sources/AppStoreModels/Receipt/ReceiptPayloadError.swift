/// Why the bytes given as an app receipt payload could not be read.
///
/// AppStoreModels does no verification, so this is the only failure it reports for receipts: the
/// payload is not the ASN.1 Apple writes, or an attribute holds a value of the wrong kind, or an
/// attribute that every receipt carries is missing. AppStoreSecurity reports it as `malformedInput`.
public struct ReceiptPayloadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A sentence saying what was wrong, for a developer.
    public let reason: String

    /// Creates an error with a reason.
    public init(_ reason: String) {
        self.reason = reason
    }

    /// The reason.
    public var description: String { reason }
}
