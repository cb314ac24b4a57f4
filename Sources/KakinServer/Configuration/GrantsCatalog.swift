import AppStoreModels
public import Foundation
public import KakinLedger

/// What each product grants: the server's half of the catalog, next to the `.storekit` file.
///
/// A JSON object from product ID to a list of grants:
///
/// ```json
/// {
///   "com.example.kakin.removeAd":        [{ "entitlement": "removeAds" }],
///   "com.example.kakin.increasePoints":  [{ "currency": "points", "amount": 100 }],
///   "com.example.kakin.soundPack":       [{ "entitlement": "soundPack" }, { "content": true }],
///   "com.example.kakin.premium.monthly": [{ "entitlement": "premium" }]
/// }
/// ```
public struct GrantsCatalog: Hashable, Sendable {
    /// Grants by product ID.
    public var grants: [String: [Grant]]

    /// Creates a catalog from grants by product ID.
    public init(grants: [String: [Grant]] = [:]) {
        self.grants = grants
    }

    /// What `productID` grants; nothing for a product the file does not name.
    public func grants(for productID: String) -> [Grant] { grants[productID] ?? [] }

    /// Reads the JSON form; every entry must be exactly one of the three shapes.
    public static func load(from data: Data) throws(ServerError) -> GrantsCatalog {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ServerError(.invalidConfiguration, "the grants file is not a JSON object of product IDs")
        }
        var grants: [String: [Grant]] = [:]
        for (productID, value) in object {
            guard StoreKitConfigurationLint.isValidProductID(productID) else {
                throw ServerError(
                    .invalidConfiguration,
                    "the grants file names \"\(productID)\": a product ID has only letters, digits, underscores and periods")
            }
            guard let list = value as? [[String: Any]] else {
                throw ServerError(.invalidConfiguration, "grants of \(productID) must be a list of objects")
            }
            grants[productID] = try list.map { entry throws(ServerError) -> Grant in
                if let name = entry["entitlement"] as? String, entry.count == 1, !name.isEmpty {
                    return .entitlement(name)
                }
                if let currency = entry["currency"] as? String, let amount = (entry["amount"] as? NSNumber)?.int64Value,
                    entry.count == 2, !currency.isEmpty, amount > 0
                {
                    return .currency(currency, amount: amount)
                }
                if entry["content"] as? Bool == true, entry.count == 1 { return .content }
                throw ServerError(
                    .invalidConfiguration,
                    "\(productID): each grant is {\"entitlement\": name}, {\"currency\": name, \"amount\": n > 0} or {\"content\": true}"
                )
            }
        }
        return GrantsCatalog(grants: grants)
    }
}
