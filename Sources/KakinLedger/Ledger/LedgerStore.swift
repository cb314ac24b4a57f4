/// The server's storage: an append-only, idempotent ledger of transactions, notifications and
/// currency movements, from which entitlements and balances are derived.
///
/// Correctness never relies on process memory: uniqueness (one row per `transactionId`, per
/// `notificationUUID`, per idempotency key) and "never below zero" are enforced by the database,
/// so several server replicas can share one database.
public protocol LedgerStore:
    PurchaseLedger, CustomerLedger, BalanceLedger, OutboxLedger, AppleCallLedger, MetricsLedger, SessionLedger,
    RetentionLedger, StripeEventLedger, LedgerOperations
{}

extension Sequence<UInt8> {
    /// Lowercase hex digits, two per byte.
    package var hexDigits: String {
        var text = ""
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(lowercaseHexDigits[Int(byte >> 4)])
            text.append(lowercaseHexDigits[Int(byte & 0x0F)])
        }
        return text
    }
}

private let lowercaseHexDigits = Array("0123456789abcdef")
