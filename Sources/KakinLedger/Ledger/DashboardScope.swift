import Foundation

/// Which apps a dashboard session opens: every app (signed in with the deployment's operator
/// key), or the apps whose secret key signed it in.
///
/// The ledger keeps it with the session, so every server sharing the database opens the same
/// apps to it, whatever its own configuration says about keys.
public enum DashboardScope: Hashable, Sendable, CustomStringConvertible {
    /// Every app the server serves.
    case allApps
    /// Only these apps, by bundle ID.
    case apps(Set<String>)

    /// Whether the session opens the app with this bundle ID.
    public func opens(_ bundleID: String) -> Bool {
        switch self {
        case .allApps: true
        case .apps(let apps): apps.contains(bundleID)
        }
    }

    /// Those of `bundleIDs` the session opens, sorted.
    public func opened(_ bundleIDs: some Sequence<String>) -> [String] {
        bundleIDs.filter(opens).sorted()
    }

    /// `all apps`, or the bundle IDs separated by commas.
    public var description: String {
        switch self {
        case .allApps: "all apps"
        case .apps(let apps): apps.sorted().joined(separator: ", ")
        }
    }

    /// How the ledger stores it: `*` for every app, or a JSON array of bundle IDs in order.
    var stored: String {
        switch self {
        case .allApps: return "*"
        case .apps(let apps):
            let data = (try? JSONEncoder().encode(apps.sorted())) ?? Data("[]".utf8)
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// The scope stored as `text`; `nil` for none or one that cannot be read, which opens nothing.
    init?(stored text: String?) {
        guard let text else { return nil }
        if text == "*" {
            self = .allApps
            return
        }
        guard let apps = try? JSONDecoder().decode([String].self, from: Data(text.utf8)) else { return nil }
        self = .apps(Set(apps))
    }
}
