import Crypto
import KakinCore

/// App user IDs as they may be shown outside the ledger: in webhook events and log lines.
///
/// An anonymous ID (`$kakin_anon_` and 32 hexadecimal digits, see `AnonymousAppUserID`) is the
/// only secret of a device that has not signed in: whoever knows it can read that customer and
/// log in as them. So it is never written out whole: it becomes `$kakin_anon_…` followed by the
/// first 12 hexadecimal digits of its SHA-256, which still lets a reader tell customers apart and
/// match a webhook event with a log line, and cannot be turned back into the ID. Identified IDs
/// (the app's own user IDs, which an app already shares with its backend) pass unchanged.
public enum CustomerIDRedaction {
    /// How many hexadecimal digits of the SHA-256 a redacted ID keeps.
    public static let digestLength = 12
    /// What a redacted anonymous ID starts with: the anonymous prefix and an ellipsis.
    public static let redactedPrefix = AnonymousAppUserID.prefix + "…"

    /// `appUserID` as it may be written to a webhook event or a log line: an identified ID
    /// unchanged; an anonymous one (any ID with the anonymous prefix, well-formed or not) as
    /// ``redactedPrefix`` and the first ``digestLength`` hexadecimal digits of the SHA-256 of its
    /// UTF-8 bytes. An ID already redacted is returned as it is. Cheap for identified IDs: one
    /// prefix comparison.
    public static func redacted(_ appUserID: String) -> String {
        guard AnonymousAppUserID.isAnonymous(appUserID), !isRedacted(appUserID) else { return appUserID }
        return redactedPrefix + SHA256.hash(data: Array(appUserID.utf8)).prefix(digestLength / 2).hexDigits
    }

    /// Whether `appUserID` is an anonymous ID as ``redacted(_:)`` writes it.
    static func isRedacted(_ appUserID: String) -> Bool {
        guard appUserID.hasPrefix(redactedPrefix) else { return false }
        let digits = appUserID.utf8.dropFirst(redactedPrefix.utf8.count)
        return digits.count == digestLength && digits.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
