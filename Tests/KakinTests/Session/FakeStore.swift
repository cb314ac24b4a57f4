import AppStoreModels
import Foundation
import Synchronization

@testable import Kakin

/// An in-memory store for session tests: sells three products, keeps unfinished transactions,
/// lets the test push updates, and fails a call loudly when it was not expected.
final class FakeStore: StoreBackend, Sendable {
    enum Permission { case allowed, denied, unreachable }

    struct State {
        var nextID = 1_000
        var unfinished: [StoreTransaction] = []
        var owned: [StoreTransaction] = []
        var finishCounts: [String: Int] = [:]
        var permission = Permission.allowed
        var updates: AsyncStream<StoreTransaction>.Continuation?
        /// The device's app transaction; `nil` makes ``appTransaction()`` fail as a store without
        /// a connection does.
        var appTransaction: String? = "app-transaction-jws"
        var appTransactionReads = 0
        /// The storefront the device reports (ISO 3166-1 alpha-3); `nil` for none.
        var storefront: String? = "USA"
    }

    static let removeAd = "com.example.kakin.removeAd"
    static let points = "com.example.kakin.increasePoints"
    static let premium = "com.example.kakin.premium.monthly"

    let storeIdentifier = "fake"
    let state = Mutex(State())
    let clock: @Sendable () -> Date

    init(clock: @escaping @Sendable () -> Date = { Date(timeIntervalSince1970: 1_790_000_000) }) {
        self.clock = clock
    }

    func setPermission(_ permission: Permission) { state.withLock { $0.permission = permission } }
    func finishCount(_ id: String) -> Int { state.withLock { $0.finishCounts[id] ?? 0 } }
    var unfinished: [StoreTransaction] { state.withLock { $0.unfinished } }

    static func type(of productID: String) -> ProductType {
        switch productID {
        case points: .consumable
        case premium: .autoRenewableSubscription
        default: .nonConsumable
        }
    }

    func product(_ id: String) -> StoreProduct {
        StoreProduct(
            id: id, type: Self.type(of: id), displayName: id, description: "A product for tests", price: 1,
            displayPrice: "$1.00", currencyCode: "USD", priceLocaleIdentifier: "en_US")
    }

    func canMakePayments() async throws -> Bool {
        switch state.withLock({ $0.permission }) {
        case .allowed: return true
        case .denied: return false
        case .unreachable: throw KakinError(.network, "the store cannot be reached")
        }
    }

    func products(for identifiers: [String]) async throws -> (products: [StoreProduct], invalid: [InvalidProduct]) {
        (identifiers.map(product), [])
    }

    /// A new transaction, as the store would sign it; the fake server reads the product from the JWS.
    func makeTransaction(_ productID: String, expires: Date? = nil, token: UUID? = nil) -> StoreTransaction {
        let id = state.withLock { state in
            state.nextID += 1
            return String(state.nextID)
        }
        return StoreTransaction(
            id: id, originalID: id, productID: productID, productType: Self.type(of: productID), quantity: 1,
            purchaseDate: clock(), expirationDate: expires, appAccountToken: token?.uuidString.lowercased(),
            jwsRepresentation: "fake.\(id).\(productID)")
    }

    func purchase(_ productID: String, quantity: Int, appAccountToken: UUID?) async throws -> StorePurchaseResult {
        let transaction = makeTransaction(
            productID, expires: productID == Self.premium ? clock().addingTimeInterval(30 * 86_400) : nil,
            token: appAccountToken)
        state.withLock { state in
            state.unfinished.append(transaction)
            if transaction.productType != .consumable { state.owned.append(transaction) }
        }
        return .purchased(transaction)
    }

    func unfinishedTransactions() async throws -> [StoreTransaction] { unfinished }

    func finish(_ transaction: StoreTransaction) async throws {
        state.withLock { state in
            state.unfinished.removeAll { $0.id == transaction.id }
            state.finishCounts[transaction.id, default: 0] += 1
        }
    }

    func restore() async throws -> [StoreTransaction] { state.withLock { $0.owned } }

    func currentEntitlements() async throws -> [StoreTransaction] { state.withLock { $0.owned } }

    /// Delivers `transaction` through the update stream, as an approval or a renewal would.
    func pushUpdate(_ transaction: StoreTransaction) {
        let continuation = state.withLock { state in
            state.unfinished.append(transaction)
            return state.updates
        }
        continuation?.yield(transaction)
    }

    func transactionUpdates() -> AsyncStream<StoreTransaction> {
        let (stream, continuation) = AsyncStream.makeStream(of: StoreTransaction.self)
        state.withLock { $0.updates = continuation }
        return stream
    }

    func appReceipt() async throws -> String? { nil }

    func appTransaction() async throws -> String? {
        let jws = state.withLock { state in
            state.appTransactionReads += 1
            return state.appTransaction
        }
        guard let jws else { throw KakinError(.network, "the store cannot be reached") }
        return jws
    }

    var appTransactionReads: Int { state.withLock { $0.appTransactionReads } }

    func storefrontCountryCode() async -> String? { state.withLock { $0.storefront } }
    func setStorefront(_ countryCode: String?) { state.withLock { $0.storefront = countryCode } }
    func setAppTransaction(_ jws: String?) { state.withLock { $0.appTransaction = jws } }

    /// Adds a transaction the account owns already (bought on another device), unfinished or not.
    func own(_ transaction: StoreTransaction, unfinished: Bool = false) {
        state.withLock { state in
            state.owned.append(transaction)
            if unfinished { state.unfinished.append(transaction) }
        }
    }
}
