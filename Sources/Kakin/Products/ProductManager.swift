public import Foundation

/// The app's products and what the customer has of them, kept across launches.
///
/// Product IDs come from code or from the server's catalog (so a new product needs no app
/// update). The per-product state (unlocked entitlements, consumable balances, subscription
/// expiry) is written atomically to a file whenever the server's signed answer changes it, so the
/// app starts with the last known state offline, and is always replaced by what the server says.
public actor ProductManager {
    /// What the app remembers between launches.
    public struct Snapshot: Codable, Hashable, Sendable {
        /// The entitlements, keyed by identifier (`removeAds`, `premium`).
        public var entitlements: [String: EntitlementState]
        /// Consumable balances, keyed by currency (`points`).
        public var balances: [String: Int64]
        /// When this state was saved; `nil` if it never was.
        public var updatedAt: Date?
        /// Whether this state was computed on the device while the server could not be reached
        /// (``CustomerInfo/Source/device``); the next server answer replaces it.
        public var isProvisional: Bool

        /// Creates a snapshot; empty by default.
        public init(
            entitlements: [String: EntitlementState] = [:], balances: [String: Int64] = [:], updatedAt: Date? = nil,
            isProvisional: Bool = false
        ) {
            self.entitlements = entitlements
            self.balances = balances
            self.updatedAt = updatedAt
            self.isProvisional = isProvisional
        }

        /// Decodes a snapshot; a file written before `isProvisional` existed reads as confirmed by the
        /// server.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            entitlements = try container.decode([String: EntitlementState].self, forKey: .entitlements)
            balances = try container.decode([String: Int64].self, forKey: .balances)
            updatedAt = try container.decodeIfPresent(Date.self, forKey: .updatedAt)
            isProvisional = try container.decodeIfPresent(Bool.self, forKey: .isProvisional) ?? false
        }
    }

    /// One entitlement as last confirmed by the server.
    public struct EntitlementState: Codable, Hashable, Sendable {
        /// Whether the entitlement was active.
        public var isActive: Bool
        /// The product that grants it.
        public var productID: String
        /// When it lapses (subscriptions); `nil` when it does not expire.
        public var expiresDate: Date?

        /// An entitlement's state, e.g. to seed a ``Snapshot`` in a preview or a test.
        public init(isActive: Bool, productID: String, expiresDate: Date? = nil) {
            self.isActive = isActive
            self.productID = productID
            self.expiresDate = expiresDate
        }
    }

    /// The product IDs the app sells.
    public private(set) var productIDs: [String]
    /// Products as the store presents them, after ``refresh(using:)``.
    public private(set) var products: [StoreProduct] = []
    /// The current state: read from disk at creation, replaced by ``update(from:at:)``.
    public private(set) var snapshot: Snapshot
    private let url: URL

    /// Creates a manager for `productIDs`, reading the state saved in `storageDirectory`.
    public init(productIDs: [String], storageDirectory: URL = PaymentManager.defaultDirectory) {
        self.productIDs = productIDs
        url = storageDirectory.appendingPathComponent("products.json")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        snapshot = (try? Data(contentsOf: url)).flatMap { try? decoder.decode(Snapshot.self, from: $0) } ?? Snapshot()
    }

    /// Replaces the product IDs with the server's catalog (`GET /v1/catalog`).
    public func loadProductIDs(from server: KakinServerClient, locale: String = "en_US") async throws {
        productIDs = try await server.catalogProductIDs(locale: locale)
    }

    /// Loads the products from the store (localized for the customer's storefront).
    @discardableResult
    public func refresh(using payments: PaymentManager) async throws -> [InvalidProduct] {
        let (products, invalid) = try await payments.products(for: productIDs)
        self.products = products
        return invalid
    }

    /// Takes the server's (signature-checked) answer as the new truth and saves it; an answer
    /// computed on the device while offline is saved too, marked as provisional.
    public func update(from customer: CustomerInfo, at date: Date = Date()) throws {
        var entitlements: [String: EntitlementState] = [:]
        for entitlement in customer.entitlements {
            entitlements[entitlement.identifier] = EntitlementState(
                isActive: entitlement.isActive, productID: entitlement.productID, expiresDate: entitlement.expiresDate)
        }
        snapshot = Snapshot(
            entitlements: entitlements, balances: customer.balances, updatedAt: date,
            isProvisional: customer.source == .device)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(snapshot).write(to: url, options: .atomic)
    }

    /// Whether an entitlement (`removeAds`, `premium`, …) is active; a subscription also checks
    /// its expiry against `date`, so a lapsed one reads as locked even before the server is asked.
    public func isUnlocked(_ entitlement: String, at date: Date = Date()) -> Bool {
        guard let state = snapshot.entitlements[entitlement], state.isActive else { return false }
        return state.expiresDate.map { $0 > date } ?? true
    }

    /// A consumable balance (`points`, `credits`).
    public func balance(of currency: String) -> Int64 { snapshot.balances[currency] ?? 0 }

    /// The product with this ID, once loaded.
    public func product(_ id: String) -> StoreProduct? { products.first { $0.id == id } }

    /// A price formatted with the product's price locale, for prices computed in the
    /// app (a per-unit price, a discount); the store's own `displayPrice` is preferred otherwise.
    public static func format(_ price: Decimal, currencyCode: String, localeIdentifier: String) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .currency
        formatter.locale = Locale(identifier: localeIdentifier)
        formatter.currencyCode = currencyCode
        let text = formatter.string(from: NSDecimalNumber(decimal: price)) ?? "\(price) \(currencyCode)"
        return text.replacingOccurrences(of: "\u{FFE5}", with: "\u{00A5}").replacingOccurrences(
            of: "\u{00A0}", with: " ")
    }
}
