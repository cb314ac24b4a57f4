import Crypto
import Foundation
import KakinCore
import KakinWire
import Synchronization

@testable import Kakin

/// A purchase server in memory, behind the SDK's transport seam: records each transaction once
/// by ID, grants from a small table, signs its answers, and can be taken offline, made to refuse
/// a transaction, or made to hold requests until several are in flight.
final class FakeServer: KakinTransport, Sendable {
    struct State {
        var reachable = true
        var refused: Set<String> = []
        var owners: [String: String] = [:]
        var products: [String: String] = [:]
        var deliveries: [String: Int] = [:]
        var balances: [String: Int64] = [:]
        var barrier = 0
        var held: [CheckedContinuation<Void, Never>] = []
        /// Every request received, in order.
        var requests: [KakinHTTPRequest] = []
        /// When set, requests naming an identified customer need an `X-Kakin-Customer-Token` it
        /// accepts for that customer (401 `customerTokenMissing` / `customerTokenInvalid` otherwise).
        var acceptsToken: (@Sendable (_ appUserID: String, _ token: String) -> Bool)?
        /// Transactions another customer owns: moved to an uploader only with the app transaction
        /// given here as `signedAppTransaction` (409 `purchasedByAnotherAccount` otherwise).
        var ownedElsewhere: [String: String] = [:]
        /// The identified customer each anonymous one became.
        var aliases: [String: String] = [:]
        /// While set, reads of a customer wait in `heldReads` until ``releaseCustomerReads()``.
        var holdsReads = false
        var heldReads: [CheckedContinuation<Void, Never>] = []
        /// Transactions paid on the web (their entitlements say `store` `stripe`).
        var paidOnWeb: Set<String> = []
        /// What a request for a checkout link is refused with, when set.
        var checkoutRefusal: (status: Int, detail: ErrorAnswer.Detail)?
    }

    static let bundleID = "com.example.kakin"
    let key = P256.Signing.PrivateKey()
    let state = Mutex(State())

    var client: KakinServerClient {
        KakinServerClient(
            baseURL: URL(string: "http://kakin.invalid")!, bundleID: Self.bundleID, publishableKey: "pk_test",
            serverKey: key.publicKey, transport: self)
    }

    func setReachable(_ reachable: Bool) { state.withLock { $0.reachable = reachable } }
    /// Reads of a customer (`GET /v1/customers/…`) wait from now on, until released.
    func holdCustomerReads() { state.withLock { $0.holdsReads = true } }
    /// How many reads of a customer are waiting.
    var heldCustomerReads: Int { state.withLock { $0.heldReads.count } }
    /// Answers the reads that wait, and stops holding them.
    func releaseCustomerReads() {
        let waiting = state.withLock { state in
            state.holdsReads = false
            defer { state.heldReads = [] }
            return state.heldReads
        }
        for read in waiting { read.resume() }
    }
    func refuse(_ transactionID: String) { _ = state.withLock { $0.refused.insert(transactionID) } }
    /// The next `count` requests wait until all of them have arrived.
    func holdUntil(_ count: Int) { state.withLock { $0.barrier = count } }
    func deliveries(_ id: String) -> Int { state.withLock { $0.deliveries[id] ?? 0 } }
    func owner(_ id: String) -> String? { state.withLock { $0.owners[id] } }
    var recorded: [String: String] { state.withLock { $0.owners } }

    /// Records a purchase of `productID` paid on the web for `user`, as the server does once
    /// Stripe's event about the payment reached it.
    func sellOnWeb(_ productID: String, to user: String, id: String = "pi_\(UUID().uuidString.prefix(8))") {
        state.withLock { state in
            state.owners[id] = user
            state.products[id] = productID
            state.paidOnWeb.insert(id)
        }
    }
    /// Refuses requests for checkout links from now on with `status` and `detail`.
    func refuseCheckout(_ status: Int, _ detail: ErrorAnswer.Detail) {
        state.withLock { $0.checkoutRefusal = (status, detail) }
    }
    /// The requests for checkout links received so far.
    var checkoutRequests: [CheckoutLinkRequest] {
        requests.filter { $0.url.path == KakinRoute.checkoutLinks(Self.bundleID).path }.compactMap {
            try? KakinJSON.decoder().decode(CheckoutLinkRequest.self, from: $0.body ?? Data())
        }
    }

    /// Every request received so far.
    var requests: [KakinHTTPRequest] { state.withLock { $0.requests } }
    /// The bodies of the transactions posted so far, in order.
    var submissions: [TransactionSubmission] {
        requests.filter { $0.url.path == KakinRoute.submitTransaction.path }.compactMap {
            try? KakinJSON.decoder().decode(TransactionSubmission.self, from: $0.body ?? Data())
        }
    }
    /// Requires customer tokens: those `accepts` takes for the customer.
    func requireTokens(_ accepts: @escaping @Sendable (_ appUserID: String, _ token: String) -> Bool) {
        state.withLock { $0.acceptsToken = accepts }
    }
    /// Records `transactionID` as another customer's, movable only with `appTransaction`.
    func ownElsewhere(_ transactionID: String, movableWith appTransaction: String) {
        state.withLock { state in
            state.ownedElsewhere[transactionID] = appTransaction
            state.owners[transactionID] = "someone else"
        }
    }

    func send(_ request: KakinHTTPRequest) async throws(KakinError) -> KakinHTTPReply {
        await passBarrier()
        guard state.withLock({ $0.reachable }) else { throw KakinError(.network, "the server cannot be reached") }
        state.withLock { $0.requests.append(request) }
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)!
        let query = Dictionary(uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        let path = components.percentEncodedPath
        if request.method == "POST", path == KakinRoute.submitTransaction.path {
            let body = try! KakinJSON.decoder().decode(TransactionSubmission.self, from: request.body!)
            if let refusal = tokenRefusal(request, naming: body.appUserId) { return refusal }
            let parts = body.signedTransaction.split(separator: ".").map(String.init)
            let id = parts[1]
            let productID = parts[2...].joined(separator: ".")
            if state.withLock({ $0.refused.contains(id) }) {
                return Self.error(
                    422, ErrorAnswer.Detail(
                        code: "verificationFailed", message: "the signature does not verify", retryable: false,
                        cause: "badSignature"))
            }
            let customer = state.withLock { $0.aliases[body.appUserId] } ?? body.appUserId
            let foreign = state.withLock { state -> Bool in
                guard let proof = state.ownedElsewhere[id] else { return false }
                guard body.signedAppTransaction == proof else { return true }
                state.ownedElsewhere[id] = nil
                state.owners[id] = customer
                state.products[id] = productID
                return false
            }
            if foreign {
                return Self.error(
                    409, ErrorAnswer.Detail(
                        code: "conflict", message: "another customer owns this purchase", retryable: false,
                        cause: "purchasedByAnotherAccount"))
            }
            state.withLock { state in
                state.deliveries[id, default: 0] += 1
                guard state.owners[id] == nil else { return }
                state.owners[id] = customer
                state.products[id] = productID
                if productID == FakeStore.points { state.balances[customer, default: 0] += 100 }
            }
            return answer(for: customer, nonce: query["nonce"])
        }
        if request.method == "POST", path.hasPrefix("/v1/customers/"), path.hasSuffix("/alias") {
            let anonymous = String(path.dropFirst("/v1/customers/".count).dropLast("/alias".count))
                .removingPercentEncoding!
            let body = try! KakinJSON.decoder().decode(CustomerAliasRequest.self, from: request.body!)
            if let refusal = tokenRefusal(request, naming: body.appUserId) { return refusal }
            state.withLock { state in
                state.aliases[anonymous] = body.appUserId
                for (id, owner) in state.owners where owner == anonymous { state.owners[id] = body.appUserId }
            }
            return answer(for: body.appUserId, nonce: query["nonce"])
        }
        if request.method == "GET", path.hasPrefix("/v1/customers/") {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let wait = state.withLock { state in
                    if state.holdsReads { state.heldReads.append(continuation) }
                    return state.holdsReads
                }
                if !wait { continuation.resume() }
            }
            let user = String(path.dropFirst("/v1/customers/".count)).removingPercentEncoding!
            if let refusal = tokenRefusal(request, naming: user) { return refusal }
            return answer(for: user, nonce: query["nonce"])
        }
        if request.method == "POST", path == KakinRoute.checkoutLinks(Self.bundleID).path {
            let body = try! KakinJSON.decoder().decode(CheckoutLinkRequest.self, from: request.body!)
            if let refusal = tokenRefusal(request, naming: body.appUserId) { return refusal }
            if let refusal = state.withLock({ $0.checkoutRefusal }) { return Self.error(refusal.status, refusal.detail) }
            let answer = CheckoutLinkAnswer(
                url: "https://kakin.invalid/checkout/\(Self.bundleID)?productId=\(body.productId)&signature=s",
                expiresAt: Date(timeIntervalSince1970: 1_790_000_900))
            return KakinHTTPReply(status: 200, body: try! KakinJSON.encoder().encode(answer))
        }
        if request.method == "GET", path == KakinRoute.catalog.path {
            let catalog = CatalogAnswer(
                bundleId: Self.bundleID, locale: "en_US",
                products: [
                    .init(productId: FakeStore.removeAd, type: "NonConsumable", grants: [.init(entitlement: "removeAds")]),
                    .init(productId: FakeStore.premium, type: "RecurringSubscription", grants: [.init(entitlement: "premium")]),
                ])
            return KakinHTTPReply(status: 200, body: try! KakinJSON.encoder().encode(catalog))
        }
        return Self.error(404, .init(code: "notFound", message: "no route \(path)", retryable: false))
    }

    /// The 401 a server requiring customer tokens answers a request naming `appUserID` (or the
    /// identified customer it became) without that customer's token; `nil` when it may pass.
    private func tokenRefusal(_ request: KakinHTTPRequest, naming appUserID: String) -> KakinHTTPReply? {
        let (accepts, customer) = state.withLock { ($0.acceptsToken, $0.aliases[appUserID] ?? appUserID) }
        guard let accepts, !AnonymousAppUserID.isAnonymous(customer) else { return nil }
        guard let token = request.headers[KakinHeader.customerToken] else {
            return Self.error(
                401, .init(code: "unauthorized", message: "a customer token is required", retryable: false,
                    cause: "customerTokenMissing"))
        }
        guard accepts(customer, token) else {
            return Self.error(
                401, .init(code: "unauthorized", message: "the customer token is not valid", retryable: false,
                    cause: "customerTokenInvalid"))
        }
        return nil
    }

    private func passBarrier() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let release: [CheckedContinuation<Void, Never>] = state.withLock { state in
                guard state.barrier > 0 else { return [continuation] }
                state.held.append(continuation)
                guard state.held.count >= state.barrier else { return [] }
                state.barrier = 0
                defer { state.held = [] }
                // Answer in the reverse order of arrival.
                return state.held.reversed()
            }
            for waiting in release { waiting.resume() }
        }
    }

    static func entitlement(for productID: String) -> String? {
        switch productID {
        case FakeStore.removeAd: "removeAds"
        case FakeStore.premium: "premium"
        default: nil
        }
    }

    private func answer(for user: String, nonce: String?) -> KakinHTTPReply {
        let customer = state.withLock { state in
            let ids = state.owners.filter { $0.value == user }.keys.sorted()
            let entitlements = ids.compactMap { id -> Entitlement? in
                let productID = state.products[id]!
                guard let name = Self.entitlement(for: productID) else { return nil }
                return .init(
                    identifier: name, productID: productID, isActive: true, transactionID: id, originalTransactionID: id,
                    store: state.paidOnWeb.contains(id) ? .stripe : .appStore)
            }
            return CustomerAnswer(
                bundleId: Self.bundleID, appUserId: user, entitlements: entitlements,
                balances: state.balances[user].map { ["points": $0] } ?? [:], transactions: [],
                transactionCount: ids.count)
        }
        let body = try! KakinJSON.encoder().encode(
            SignedCustomerAnswer(nonce: nonce, signedDate: 0, customer: customer))
        let signature = try! key.signature(for: body).rawRepresentation.base64EncodedString()
        return KakinHTTPReply(status: 200, headers: [KakinHeader.signature: signature], body: body)
    }

    private static func error(_ status: Int, _ detail: ErrorAnswer.Detail) -> KakinHTTPReply {
        KakinHTTPReply(status: status, body: try! KakinJSON.encoder().encode(ErrorAnswer(error: detail)))
    }
}

/// A sleeper the test wakes: each sleep is recorded and returns when the test says so.
final class ManualSleeper: DeliverySleeper, Sendable {
    struct State {
        var requests: [Date] = []
        var sleeping: [CheckedContinuation<Void, any Error>] = []
        var requested: [CheckedContinuation<Void, Never>] = []
    }
    let state = Mutex(State())

    func sleep(until date: Date, now: Date) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let waiters = state.withLock { state in
                state.requests.append(date)
                state.sleeping.append(continuation)
                defer { state.requested = [] }
                return state.requested
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Waits until someone is sleeping; returns the moment the latest sleeper waits for.
    func nextRequest() async -> Date {
        while true {
            if let date = state.withLock({ $0.sleeping.isEmpty ? nil : $0.requests.last }) { return date }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state in
                    if !state.sleeping.isEmpty { return true }
                    state.requested.append(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// Wakes every sleeper.
    func wake() {
        let sleeping = state.withLock { state in
            defer { state.sleeping = [] }
            return state.sleeping
        }
        for sleeper in sleeping { sleeper.resume() }
    }
}

/// A clock the test moves.
final class MovableClock: Sendable {
    let current = Mutex(Date(timeIntervalSince1970: 1_790_000_000))
    var now: @Sendable () -> Date { { [self] in current.withLock { $0 } } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// Collects what a delegate hears.
final class RecordingDelegate: PaymentManagerDelegate {
    let statuses = Mutex<[PaymentStatus]>([])
    let completed = Mutex<[String]>([])
    let errors = Mutex<[PaymentError]>([])

    func onPaymentStatus(_ status: PaymentStatus) { statuses.withLock { $0.append(status) } }
    func completePayment(_ transaction: StoreTransaction) { completed.withLock { $0.append(transaction.id) } }
    func onPaymentError(_ error: PaymentError) { errors.withLock { $0.append(error) } }
}

/// A fresh storage directory.
func temporaryDirectory(_ name: String) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("kakin-\(name)-\(UUID().uuidString)")
}

/// Reads `count` statuses from a stream (the stream ends the wait, never a timer).
func collect(_ count: Int, from stream: AsyncStream<PaymentStatus>) async -> [PaymentStatus] {
    var result: [PaymentStatus] = []
    for await status in stream {
        result.append(status)
        if result.count == count { break }
    }
    return result
}
