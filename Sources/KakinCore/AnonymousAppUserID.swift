import Foundation

/// The app user IDs the SDK makes for customers who have not signed in: `$kakin_anon_` followed by
/// 32 lowercase hexadecimal digits (a random UUID without its dashes).
///
/// The prefix is what tells the server and the SDK that a customer is anonymous: an anonymous
/// customer's purchases can be moved to an identified customer
/// (`POST /v1/customers/{anonymous user}/alias`), and an identified customer's never are. Apps
/// must not give their own users IDs with this prefix.
public enum AnonymousAppUserID {
    /// `$kakin_anon_`: every anonymous ID starts with it, and no identified ID may.
    public static let prefix = "$kakin_anon_"

    /// Whether `appUserID` names an anonymous customer (it starts with ``prefix``).
    public static func isAnonymous(_ appUserID: String) -> Bool {
        appUserID.hasPrefix(prefix)
    }

    /// Whether `appUserID` is exactly what ``make()`` makes: ``prefix`` and 32 lowercase
    /// hexadecimal digits. The server refuses an ID that starts with ``prefix`` and is anything else.
    public static func isWellFormed(_ appUserID: String) -> Bool {
        guard appUserID.hasPrefix(prefix) else { return false }
        let digits = appUserID.utf8.dropFirst(prefix.utf8.count)
        return digits.count == 32 && digits.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// A new anonymous ID: ``prefix`` and a random UUID's 32 hexadecimal digits, lowercase.
    public static func make() -> String {
        prefix + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }
}
