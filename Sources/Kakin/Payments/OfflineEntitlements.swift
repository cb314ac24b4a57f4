public import Foundation

/// What the device knows for computing entitlements while the purchase server cannot be reached:
/// which entitlement each product unlocks (learned from the server's answers and catalog), and each
/// user's last answer from the server (for balances, which only the server can count).
///
/// Kept in `offline.json` in the storage directory, replaced atomically.
public actor OfflineEntitlements {
    struct Document: Codable {
        /// Entitlement identifiers by product ID.
        var rules: [String: [String]] = [:]
        /// The last answer from the server, by app user.
        var customers: [String: CustomerInfo] = [:]
    }

    private let url: URL
    private var document: Document

    /// Opens (or creates) the file in `directory`.
    public init(directory: URL) {
        url = directory.appendingPathComponent("offline.json")
        document = (try? Data(contentsOf: url)).flatMap { try? JSONDecoder().decode(Document.self, from: $0) }
            ?? Document()
    }

    /// The entitlement identifiers a product unlocks, as last learned; empty when unknown.
    public func identifiers(forProductID productID: String) -> [String] { document.rules[productID] ?? [] }

    /// Learns from a server answer: its product-to-entitlement pairs, and the answer itself.
    public func learn(from customer: CustomerInfo) {
        guard customer.source == .server else { return }
        var changed = document.customers[customer.appUserID] != customer
        document.customers[customer.appUserID] = customer
        for entitlement in customer.entitlements {
            var known = document.rules[entitlement.productID] ?? []
            if !known.contains(entitlement.identifier) {
                known.append(entitlement.identifier)
                document.rules[entitlement.productID] = known
                changed = true
            }
        }
        if changed { save() }
    }

    /// Learns which entitlements each product unlocks from the server's catalog.
    public func learn(rules: [String: [String]]) {
        guard !rules.isEmpty else { return }
        document.rules.merge(rules) { _, new in new }
        save()
    }

    /// The entitlements the store's own transactions give at `date`: non-consumables unless
    /// revoked, subscriptions until they expire. Consumables give no entitlement; balances are the
    /// last ones the server confirmed for this user. Marked ``CustomerInfo/Source/device``.
    public func customer(
        appUserID: String, transactions: [StoreTransaction], at date: Date
    ) -> CustomerInfo {
        var entitlements: [CustomerInfo.Entitlement] = []
        for transaction in transactions.sorted(by: { $0.purchaseDate > $1.purchaseDate }) {
            guard transaction.productType != .consumable else { continue }
            let active =
                transaction.revocationDate == nil && (transaction.expirationDate.map { $0 > date } ?? true)
            let names = identifiers(forProductID: transaction.productID)
            for identifier in names.isEmpty ? [transaction.productID] : names {
                guard !entitlements.contains(where: { $0.identifier == identifier && ($0.isActive || !active) })
                else { continue }
                entitlements.removeAll { $0.identifier == identifier }
                entitlements.append(
                    CustomerInfo.Entitlement(
                        identifier: identifier, productID: transaction.productID, isActive: active,
                        expiresDate: transaction.expirationDate, revocationDate: transaction.revocationDate,
                        transactionID: transaction.id, originalTransactionID: transaction.originalID))
            }
        }
        return CustomerInfo(
            appUserID: appUserID, entitlements: entitlements.sorted { $0.identifier < $1.identifier },
            balances: document.customers[appUserID]?.balances ?? [:], source: .device)
    }

    private func save() {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try? FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? encoder.encode(document).write(to: url, options: .atomic)
    }
}
