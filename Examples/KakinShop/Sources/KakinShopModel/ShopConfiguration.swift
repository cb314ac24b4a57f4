public import Foundation
public import Kakin

/// What ``ShopModel/configure(_:backend:)`` needs: the SDK's own configuration (the purchase
/// server, the app's bundle ID and publishable key, the pinned server key, where the SDK keeps its
/// outbox) and what the shop adds to it.
public struct ShopConfiguration: Sendable {
    /// The SDK's configuration, passed unchanged to `KakinStore.configure(_:backend:)`.
    public var store: KakinStore.Configuration
    /// The products to sell, in order; `nil` (the default) sells the purchase server's catalog
    /// (`GET /v1/catalog`), so products change without an app update.
    public var productIDs: [String]?
    /// The entitlement the subscription grants, whose state the banner shows (`premium` in the
    /// example catalog).
    public var subscriptionEntitlement: String
    /// Where hosted content is downloaded and unpacked (the caches folder by default, as StoreKit
    /// keeps its own).
    public var contentDirectory: URL
    /// Bytes per download request: smaller chunks report progress more often.
    public var contentChunkSize: Int
    /// The locale the server's catalog is read in (its products' names and what they grant).
    public var catalogLocale: String

    /// A configuration; the defaults suit the example catalog.
    public init(
        store: KakinStore.Configuration, productIDs: [String]? = nil, subscriptionEntitlement: String = "premium",
        contentDirectory: URL = DownloadManager.defaultDirectory, contentChunkSize: Int = 256 * 1024,
        catalogLocale: String = "en_US"
    ) {
        self.store = store
        self.productIDs = productIDs
        self.subscriptionEntitlement = subscriptionEntitlement
        self.contentDirectory = contentDirectory
        self.contentChunkSize = contentChunkSize
        self.catalogLocale = catalogLocale
    }
}

/// Where the shop connects, read at launch from the app's Info.plist and its environment (the
/// Xcode scheme's environment variables win), so the same build runs against `kakin serve` on
/// the Mac, a staging server, or production.
///
/// | key | meaning | default |
/// | --- | --- | --- |
/// | `KAKIN_SERVER_URL` | the purchase server | `http://127.0.0.1:8080` (`kakin serve`) |
/// | `KAKIN_BUNDLE_ID` | the app's bundle ID as the server knows it | `com.example.kakin` |
/// | `KAKIN_PUBLISHABLE_KEY` | the app's `pk_…` key (printed by `kakin serve`, kept in `kakin-data/keys.json`) | required |
/// | `KAKIN_SERVER_KEY_PEM` | the server's public key (`GET /v1/server-key`), pinned | fetched at launch: development only |
/// | `KAKIN_SANDBOX_URL` | Kakin's sandbox App Store (`http://127.0.0.1:8081`): buy there instead of StoreKit | StoreKit |
/// | `KAKIN_SANDBOX_TESTER` | the sandbox tester the app plays | `shop` |
public struct ShopSettings: Hashable, Sendable {
    /// Why settings cannot be used.
    public enum Problem: Error, Hashable, Sendable, CustomStringConvertible {
        /// A required key has no value.
        case missing(String)
        /// A key's value is not an http or https URL.
        case notAURL(key: String, value: String)

        /// The problem in words, with where to find the value.
        public var description: String {
            switch self {
            case .missing(let key) where key == ShopSettings.Key.publishableKey:
                "Set \(key) to the app's publishable key (kakin serve prints it; it is kept in kakin-data/keys.json)."
            case .missing(let key): "Set \(key)."
            case .notAURL(let key, let value): "\(key) must be an http or https URL, not \(value)."
            }
        }
    }

    /// The names of the settings, in the environment and in Info.plist.
    public enum Key {
        /// The purchase server's URL.
        public static let serverURL = "KAKIN_SERVER_URL"
        /// The app's bundle ID.
        public static let bundleID = "KAKIN_BUNDLE_ID"
        /// The publishable key.
        public static let publishableKey = "KAKIN_PUBLISHABLE_KEY"
        /// The server's public key, PEM.
        public static let serverKeyPEM = "KAKIN_SERVER_KEY_PEM"
        /// The sandbox App Store's URL.
        public static let sandboxURL = "KAKIN_SANDBOX_URL"
        /// The sandbox tester.
        public static let sandboxTester = "KAKIN_SANDBOX_TESTER"
    }

    /// The purchase server.
    public var serverURL: URL
    /// The app's bundle ID as the server knows it.
    public var bundleID: String
    /// The app's publishable key.
    public var publishableKey: String
    /// The server's public key (PEM) to pin; `nil` fetches it at launch, trusting whatever server
    /// answers first: for development only.
    public var serverKeyPEM: String?
    /// Kakin's sandbox App Store, to buy there (with the SDK's `SandboxBackend`) instead of with
    /// StoreKit; `nil` uses StoreKit.
    public var sandboxURL: URL?
    /// The sandbox tester the app plays when ``sandboxURL`` is set.
    public var sandboxTester: String

    /// Reads the settings from `values` (Info.plist's strings overlaid with the environment); empty
    /// values count as absent.
    public init(_ values: [String: String]) throws(Problem) {
        func value(_ key: String) -> String? {
            guard let text = values[key]?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else {
                return nil
            }
            return text
        }
        func url(_ key: String) throws(Problem) -> URL? {
            guard let text = value(key) else { return nil }
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host != nil
            else { throw .notAURL(key: key, value: text) }
            return url
        }
        serverURL = try url(Key.serverURL) ?? URL(string: "http://127.0.0.1:8080")!
        bundleID = value(Key.bundleID) ?? "com.example.kakin"
        guard let publishableKey = value(Key.publishableKey) else { throw .missing(Key.publishableKey) }
        self.publishableKey = publishableKey
        // A PEM in an environment variable or a plist string often has its line breaks escaped.
        serverKeyPEM = value(Key.serverKeyPEM)?.replacingOccurrences(of: "\\n", with: "\n")
        sandboxURL = try url(Key.sandboxURL)
        sandboxTester = value(Key.sandboxTester) ?? "shop"
    }
}
