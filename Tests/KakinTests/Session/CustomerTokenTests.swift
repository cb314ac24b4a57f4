import Foundation
import KakinCore
import KakinWire
import Synchronization
import Testing

@testable import Kakin

/// The app's customer token provider as the SDK uses it: asked for identified customers only,
/// its tokens kept until shortly before they expire, one refusal answered with one fresh token,
/// and a token that cannot be had never costing a purchase.
@Suite struct CustomerTokenTests {
    /// Mints JSON Web Token-shaped tokens (the signature is not checked here) and records who asked.
    final class Mint: Sendable {
        let calls = Mutex<[String]>([])
        let failing = Mutex(false)
        /// When set, the next call waits until ``releaseHeldCall()`` and then fails, as a request to
        /// an app backend that answers late, and badly; ``held`` yields once it waits.
        let holdsNextCall = Mutex(false)
        let (held, heldNow) = AsyncStream.makeStream(of: Void.self)
        private let release = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let lifetime: TimeInterval
        let clock: MovableClock

        init(clock: MovableClock, lifetime: TimeInterval = 600) {
            self.clock = clock
            self.lifetime = lifetime
        }

        var provider: CustomerTokenProvider {
            { [self] appUserID in
                let serial = calls.withLock { calls in
                    calls.append(appUserID)
                    return calls.count
                }
                if holdsNextCall.withLock({ holds in defer { holds = false }; return holds }) {
                    await withCheckedContinuation { continuation in
                        release.withLock { $0 = continuation }
                        heldNow.yield()
                    }
                    throw URLError(.timedOut)
                }
                if failing.withLock({ $0 }) { throw URLError(.cannotConnectToHost) }
                return Self.token(appUserID, serial: serial, expires: clock.now().addingTimeInterval(lifetime))
            }
        }

        /// Lets the held call fail (``holdsNextCall``).
        func releaseHeldCall() { release.withLock { $0.take() }?.resume() }

        /// The `sub` claim of a token this mint made.
        static func subject(of token: String) -> String? {
            let parts = token.split(separator: ".")
            guard parts.count == 3 else { return nil }
            var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64 += "=" }
            struct Claims: Decodable { var sub: String }
            return Data(base64Encoded: base64).flatMap { try? JSONDecoder().decode(Claims.self, from: $0).sub }
        }

        static func token(_ appUserID: String, serial: Int, expires: Date) -> String {
            func encoded(_ text: String) -> String {
                Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                    .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            }
            let claims = #"{"sub":"\#(appUserID)","aud":"\#(FakeServer.bundleID)","n":\#(serial),"exp":\#(Int(expires.timeIntervalSince1970))}"#
            return encoded(#"{"alg":"HS256","typ":"JWT"}"#) + "." + encoded(claims) + ".c2lnbmF0dXJl"
        }
    }

    final class Counter: Sendable {
        let value = Mutex(0)
        func next() -> Int { value.withLock { $0 += 1; return $0 } }
    }

    func client(_ server: FakeServer, _ mint: Mint?) -> KakinServerClient {
        let clock = mint?.clock ?? MovableClock()
        return KakinServerClient(
            baseURL: URL(string: "http://kakin.invalid")!, bundleID: FakeServer.bundleID, publishableKey: "pk_test",
            serverKey: server.key.publicKey, transport: server, customerToken: mint?.provider, now: clock.now)
    }

    func session(
        _ store: FakeStore, _ client: KakinServerClient, user: String, directory: URL, clock: MovableClock
    ) throws -> StoreSession {
        try StoreSession(
            backend: store, server: client, appUserID: user, storageDirectory: directory, now: clock.now,
            retryPolicy: RetryPolicy(base: 2, maximum: 60, jitter: 0, random: { 0 }), sleeper: ManualSleeper())
    }

    static func token(of request: KakinHTTPRequest) -> String? { request.headers[KakinHeader.customerToken] }

    @Test func tokensGoWithIdentifiedCustomersOnlyAndAreKeptUntilAMinuteBeforeTheyExpire() async throws {
        let clock = MovableClock()
        let mint = Mint(clock: clock)
        let server = FakeServer()
        let client = client(server, mint)
        let anonymous = AnonymousAppUserID.make()

        _ = try await client.customer(appUserID: "alice")
        _ = try await client.customer(appUserID: "alice")
        _ = try await client.customer(appUserID: anonymous)
        _ = try await client.catalog()
        let (url, headers) = try await client.contentRequest(productID: FakeStore.removeAd, appUserID: "alice")
        let anonymousContent = try await client.contentRequest(productID: FakeStore.removeAd, appUserID: anonymous)
        #expect(mint.calls.withLock { $0 } == ["alice"], "asked once, for the identified customer only")
        let sent = server.requests.map(Self.token(of:))
        let first = try #require(sent[0])
        #expect(sent == [first, first, nil, nil])
        #expect(headers[KakinHeader.customerToken] == first && headers[KakinHeader.publishableKey] == "pk_test")
        #expect(url.path == "/v1/content/\(FakeStore.removeAd)")
        #expect(anonymousContent.headers[KakinHeader.customerToken] == nil)

        // Ten minutes of life: kept for nine, renewed in the last.
        clock.advance(539)
        _ = try await client.customer(appUserID: "alice")
        #expect(mint.calls.withLock { $0.count } == 1)
        clock.advance(1)
        _ = try await client.customer(appUserID: "alice")
        #expect(mint.calls.withLock { $0.count } == 2)
        #expect(Self.token(of: server.requests.last!) != first)

        // Copies of the client share what they were given; another customer gets a token of their own.
        let copy = client
        _ = try await copy.customer(appUserID: "alice")
        _ = try await copy.customer(appUserID: "bob")
        #expect(mint.calls.withLock { $0 } == ["alice", "alice", "bob"])
    }

    @Test func concurrentRequestsForOneCustomerWaitForOneToken() async throws {
        let clock = MovableClock()
        let mint = Mint(clock: clock)
        let server = FakeServer()
        let client = client(server, mint)
        server.holdUntil(4)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { _ = try await client.customer(appUserID: "alice") } }
            try await group.waitForAll()
        }
        #expect(mint.calls.withLock { $0 } == ["alice"])
        #expect(Set(server.requests.map(Self.token(of:))).count == 1)
    }

    @Test func aTokenWithoutAReadableExpiryIsUsedOnce() async throws {
        let calls = Counter()
        let server = FakeServer()
        let client = KakinServerClient(
            baseURL: URL(string: "http://kakin.invalid")!, bundleID: FakeServer.bundleID, publishableKey: "pk_test",
            serverKey: server.key.publicKey, transport: server,
            customerToken: { _ in "opaque-\(calls.next())" })
        _ = try await client.customer(appUserID: "alice")
        _ = try await client.customer(appUserID: "alice")
        #expect(server.requests.map(Self.token(of:)) == ["opaque-1", "opaque-2"])
        #expect(CustomerTokens.expiry(of: "opaque") == nil && CustomerTokens.expiry(of: "a.b.c") == nil)
        #expect(
            CustomerTokens.expiry(of: Mint.token("x", serial: 1, expires: Date(timeIntervalSince1970: 2_000_000_000)))
                == Date(timeIntervalSince1970: 2_000_000_000))
    }

    @Test func aRefusedTokenIsReplacedOnceAndTheRequestSentOnceMore() async throws {
        let clock = MovableClock()
        let mint = Mint(clock: clock)
        let server = FakeServer()
        let client = client(server, mint)
        // The server takes the second token only (the first was minted before a secret changed).
        let second = Mint.token("alice", serial: 2, expires: clock.now().addingTimeInterval(600))
        server.requireTokens { user, token in user == "alice" && token == second }
        let customer = try await client.customer(appUserID: "alice")
        #expect(customer.appUserID == "alice")
        #expect(mint.calls.withLock { $0 } == ["alice", "alice"])
        #expect(server.requests.count == 2 && Self.token(of: server.requests[1]) == second)
        // The fresh token is kept.
        _ = try await client.customer(appUserID: "alice")
        #expect(mint.calls.withLock { $0.count } == 2 && server.requests.count == 3)

        // Refused again after the fresh one: one more try only, then a typed, retryable error.
        server.requireTokens { _, _ in false }
        do {
            _ = try await client.customer(appUserID: "alice")
            Issue.record("a refused token was accepted")
        } catch let error as KakinError {
            #expect(error.code == .unauthorized && error.isRetryable)
            #expect(error.serverCode == "unauthorized" && error.cause == "customerTokenInvalid")
            #expect(PaymentError(error) == .unauthorized(error) && PaymentError(error).isRetryable)
        }
        #expect(mint.calls.withLock { $0.count } == 3 && server.requests.count == 5)
    }

    @Test func withoutAProviderAServerThatRequiresTokensIsAnsweredWithATypedError() async throws {
        let server = FakeServer()
        server.requireTokens { _, _ in true }
        let client = client(server, nil)
        await #expect(throws: KakinError(.unauthorized, "")) { try await client.customer(appUserID: "alice") }
        #expect(server.requests.count == 1)
        // Anonymous customers need none.
        _ = try await client.customer(appUserID: AnonymousAppUserID.make())
    }

    @Test func aFailingProviderSendsNothing() async throws {
        let clock = MovableClock()
        let mint = Mint(clock: clock)
        mint.failing.withLock { $0 = true }
        let server = FakeServer()
        let client = client(server, mint)
        do {
            _ = try await client.customer(appUserID: "alice")
            Issue.record("no token, yet an answer")
        } catch let error as KakinError {
            #expect(error.code == .unauthorized && error.isRetryable && error.serverCode == nil)
            #expect(error.message.contains("token provider"))
        }
        await #expect(throws: KakinError(.unauthorized, "")) {
            try await client.contentRequest(productID: FakeStore.removeAd, appUserID: "alice")
        }
        #expect(server.requests.isEmpty)
        mint.failing.withLock { $0 = false }
        _ = try await client.customer(appUserID: "alice")
        #expect(server.requests.count == 1)
    }

    /// Alice's payments, with a server that checks customer tokens and an app backend that cannot
    /// supply one until its mint stops failing.
    func paymentsWithoutTokens(_ directory: URL) async throws -> (PaymentManager, FakeStore, FakeServer, Mint) {
        let clock = MovableClock()
        let mint = Mint(clock: clock)
        let store = FakeStore()
        let server = FakeServer()
        server.requireTokens { user, token in Mint.subject(of: token) == user }
        mint.failing.withLock { $0 = true }
        let payments = await PaymentManager(
            session: try session(store, client(server, mint), user: "alice", directory: directory, clock: clock))
        return (payments, store, server, mint)
    }

    @Test func aPurchaseWaitsWhileNoTokenCanBeHadAndIsDeliveredOnceOneCan() async throws {
        let directory = temporaryDirectory("token-outbox")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (payments, store, server, mint) = try await paymentsWithoutTokens(directory)
        let events = await payments.statusUpdates()
        guard case .purchased(let transaction, nil) = try await payments.purchase(store.product(FakeStore.removeAd))
        else {
            Issue.record("expected a purchase awaiting the server")
            return
        }
        #expect(await collect(2, from: events) == [.purchasing(productID: FakeStore.removeAd), .awaitingServer(transaction)])
        // The app's backend is unreachable: kept, unfinished, to be retried; not refused.
        let entry = try #require(await payments.session.outbox.all.first)
        #expect(!entry.rejected && entry.attempts == 1 && entry.lastError?.contains("unauthorized") == true)
        #expect(store.unfinished.map(\.id) == [transaction.id] && server.requests.isEmpty)

        // The app's backend answers again: its token passes, and the purchase is delivered.
        mint.failing.withLock { $0 = false }
        #expect(await payments.deliverPending() == 1)
        #expect(server.owner(transaction.id) == "alice" && store.finishCount(transaction.id) == 1)
        #expect(await payments.session.outbox.all.isEmpty)
        await payments.shutdown()
    }

    @Test(.timeLimit(.minutes(3)))
    func sendingWhatIsPendingWaitsForAnAttemptInFlightAndSendsAgainWhatItLeft() async throws {
        let directory = temporaryDirectory("token-in-flight")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (payments, store, server, mint) = try await paymentsWithoutTokens(directory)
        guard case .purchased(let transaction, nil) = try await payments.purchase(store.product(FakeStore.removeAd))
        else {
            Issue.record("expected a purchase awaiting the server")
            return
        }
        // An attempt started while the app's backend was still down hangs on its token...
        mint.holdsNextCall.withLock { $0 = true }
        let early = Task { await payments.deliverPending() }
        var held = mint.held.makeAsyncIterator()
        _ = await held.next()
        // ...when the backend is back and the app sends what is pending: it waits for that attempt.
        mint.failing.withLock { $0 = false }
        let answered = Mutex(false)
        let now = Task {
            defer { answered.withLock { $0 = true } }
            return await payments.deliverPending()
        }
        while await !payments.session.waitsForAttempt(on: transaction.id), !answered.withLock({ $0 }),
            !Task.isCancelled
        {
            await Task.yield()
        }
        mint.releaseHeldCall()
        #expect(await early.value == 0)
        #expect(await now.value == 1, "sent again once the attempt in flight failed")
        #expect(server.owner(transaction.id) == "alice" && store.finishCount(transaction.id) == 1)
        #expect(await payments.pendingDeliveries().isEmpty)
        await payments.shutdown()
    }

    @Test func aTokenTheServerKeepsRefusingKeepsThePurchaseQueued() async throws {
        let directory = temporaryDirectory("token-refused")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = MovableClock()
        let mint = Mint(clock: clock)
        let store = FakeStore()
        let server = FakeServer()
        server.requireTokens { _, _ in false }  // signed with a secret the server no longer has
        let payments = await PaymentManager(
            session: try session(store, client(server, mint), user: "alice", directory: directory, clock: clock))
        guard case .purchased(let transaction, nil) = try await payments.purchase(store.product(FakeStore.removeAd))
        else {
            Issue.record("expected a purchase awaiting the server")
            return
        }
        #expect(server.requests.count == 2, "one fresh token, one more try")
        #expect(await payments.rejectedDeliveries().isEmpty)
        #expect(await payments.pendingDeliveries().map(\.id) == [transaction.id])
        #expect(store.finishCount(transaction.id) == 0)
        // Offline entitlements stand in while no token passes.
        let customer = try await payments.customerInfo()
        #expect(customer.source == .device)
        await #expect(throws: KakinError(.unauthorized, "")) { try await payments.customerInfo(allowOffline: false) }
        await payments.shutdown()
    }

    @Test func theAppTransactionGoesWithWhatTheAppDidNotJustBuy() async throws {
        let directory = temporaryDirectory("proof")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = MovableClock()
        let store = FakeStore()
        let server = FakeServer()
        // Bought on another device, left unfinished: replayed at launch.
        let replayed = store.makeTransaction(FakeStore.premium, token: UUID())
        store.own(replayed, unfinished: true)
        let payments = await PaymentManager(
            session: try session(store, server.client, user: "alice", directory: directory, clock: clock))
        let events = await payments.statusUpdates()
        let fresh = try await payments.purchase(store.product(FakeStore.removeAd))
        guard case .purchased(let bought, _?) = fresh else {
            Issue.record("expected a delivered purchase, got \(fresh)")
            return
        }
        let approved = store.makeTransaction(FakeStore.points, token: StoreSession.accountToken(for: "alice"))
        store.pushUpdate(approved)
        _ = await firstStatus(in: events) { $0 == .purchased(approved) }
        let restored = try await payments.restore()
        #expect(Set(restored.map(\.id)) == [replayed.id, bought.id])

        let proofs = server.submissions.map { ($0.signedTransaction.split(separator: ".")[1], $0.signedAppTransaction) }
        #expect(
            proofs.map { "\($0.0) \($0.1 ?? "none")" } == [
                "\(replayed.id) app-transaction-jws", "\(bought.id) none", "\(approved.id) app-transaction-jws",
                "\(replayed.id) app-transaction-jws", "\(bought.id) app-transaction-jws",
            ])
        // Asked once for the launch and the update, once more for the restore.
        #expect(store.appTransactionReads == 2)
        await payments.shutdown()
    }

    @Test func aPurchaseAnotherAccountOwnsIsRefusedForGoodUntilARestoreUnderTheRightAccount() async throws {
        let directory = temporaryDirectory("foreign")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = MovableClock()
        let store = FakeStore()
        let server = FakeServer()
        let delegate = RecordingDelegate()
        let payments = await PaymentManager(
            session: try session(store, server.client, user: "alice", directory: directory, clock: clock))
        await payments.setDelegate(delegate)
        let events = await payments.statusUpdates()
        // Another customer's purchase reaches this device, signed in to another Apple Account.
        let foreign = store.makeTransaction(FakeStore.removeAd, token: StoreSession.accountToken(for: "bob"))
        server.ownElsewhere(foreign.id, movableWith: "the buyer's app transaction")
        store.pushUpdate(foreign)
        #expect(await collect(1, from: events) == [.failed(productID: FakeStore.removeAd, error: .purchasedByAnotherAccount)])
        #expect(!PaymentError.purchasedByAnotherAccount.isRetryable)
        let rejected = await payments.rejectedDeliveries()
        #expect(delegate.errors.withLock { $0 } == [.purchasedByAnotherAccount])
        #expect(rejected.map(\.transaction.id) == [foreign.id])
        #expect(rejected.first?.reason.contains("restore purchases on a device signed in to that Apple Account") == true)
        #expect(store.finishCount(foreign.id) == 0 && server.owner(foreign.id) == "someone else")
        // Not retried by itself, nor at the next launch.
        let requests = server.requests.count
        #expect(await payments.deliverPending() == 0)
        await payments.session.start()
        #expect(server.requests.count == requests)

        // Signed in to the Apple Account that bought it, the customer restores: it moves.
        store.setAppTransaction("the buyer's app transaction")
        store.own(foreign)
        _ = try await payments.restore()
        #expect(await firstStatus(in: events) { $0 == .restoreFinished } != nil)
        #expect(server.owner(foreign.id) == "alice" && store.finishCount(foreign.id) == 1)
        #expect(await payments.rejectedDeliveries().isEmpty && delegate.completed.withLock { $0 } == [foreign.id])
        await payments.shutdown()
    }

    @Test func aPurchaseAnotherAccountOwnsWaitsWhenTheAppTransactionCouldNotBeHad() async throws {
        let directory = temporaryDirectory("foreign-no-proof")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = MovableClock()
        let store = FakeStore()
        let server = FakeServer()
        store.setAppTransaction(nil)
        let payments = await PaymentManager(
            session: try session(store, server.client, user: "alice", directory: directory, clock: clock))
        let events = await payments.statusUpdates()
        let foreign = store.makeTransaction(FakeStore.removeAd, token: StoreSession.accountToken(for: "bob"))
        server.ownElsewhere(foreign.id, movableWith: "app-transaction-jws")
        store.pushUpdate(foreign)
        #expect(await collect(1, from: events) == [.awaitingServer(foreign)])
        #expect(await payments.rejectedDeliveries().isEmpty)
        #expect(server.submissions.last?.signedAppTransaction == nil)

        store.setAppTransaction("app-transaction-jws")
        #expect(await payments.deliverPending() == 1)
        #expect(server.owner(foreign.id) == "alice" && store.finishCount(foreign.id) == 1)
        await payments.shutdown()
    }

    @Test func whatAnAnonymousCustomerQueuedGoesWithTheTokenOfTheUserItBecameAfterARelaunch() async throws {
        let directory = temporaryDirectory("token-successor")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = MovableClock()
        let mint = Mint(clock: clock)
        let store = FakeStore()
        let server = FakeServer()
        let anonymous = AnonymousAppUserID.make()
        let session = try session(store, client(server, mint), user: anonymous, directory: directory, clock: clock)
        let payments = await PaymentManager(session: session)
        server.setReachable(false)
        guard case .purchased(let transaction, nil) = try await payments.purchase(store.product(FakeStore.removeAd))
        else {
            Issue.record("expected a purchase awaiting the server")
            return
        }
        // The log-in reached the server, and the app was killed before the queue was sent.
        server.setReachable(true)
        let customer = try await session.server.logIn(anonymousID: anonymous, as: "ren")
        #expect(customer.appUserID == "ren")
        await session.identify("ren", succeeding: anonymous)
        await payments.shutdown()
        #expect(Self.token(of: server.requests.last!).flatMap(Mint.subject(of:)) == "ren")
        #expect(mint.calls.withLock { $0 } == ["ren"])
        server.requireTokens { user, token in Mint.subject(of: token) == user }

        let relaunched = await PaymentManager(
            session: try self.session(store, client(server, mint), user: "ren", directory: directory, clock: clock))
        #expect(server.owner(transaction.id) == "ren" && store.finishCount(transaction.id) == 1)
        let upload = try #require(server.requests.last)
        #expect(server.submissions.last?.appUserId == anonymous)
        #expect(Self.token(of: upload).flatMap(Mint.subject(of:)) == "ren")
        #expect(mint.calls.withLock { $0 } == ["ren", "ren"])
        #expect(await relaunched.session.recipient(of: anonymous) == "ren")
        await relaunched.shutdown()
    }

    @Test func refusalsBecomeTypedErrors() throws {
        func reply(_ status: Int, _ code: String, cause: String?) -> KakinHTTPReply {
            KakinHTTPReply(
                status: status,
                body: try! KakinJSON.encoder().encode(
                    ErrorAnswer(error: .init(code: code, message: "refused", retryable: false, cause: cause))))
        }
        func error(_ reply: KakinHTTPReply) -> KakinError? {
            do { try KakinServerClient.check(reply) } catch { return error }
            return nil
        }
        let expired = try #require(error(reply(401, "unauthorized", cause: "customerTokenExpired")))
        #expect(expired.code == .unauthorized && expired.isRetryable && expired.cause == "customerTokenExpired")
        let badKey = try #require(error(reply(401, "unauthorized", cause: nil)))
        #expect(badKey.code == .serverRejected && !badKey.isRetryable)
        let foreign = try #require(error(reply(409, "conflict", cause: "purchasedByAnotherAccount")))
        #expect(foreign.code == .purchasedByAnotherAccount && !foreign.isRetryable && foreign.serverCode == "conflict")
        #expect(foreign.message.contains("Apple Account that bought it"))
        #expect(PaymentError(foreign) == .purchasedByAnotherAccount)
        let aliased = try #require(error(reply(409, "conflict", cause: "aliasedToAnotherCustomer")))
        #expect(aliased.code == .serverRejected && PaymentError(aliased) == .serverRejected(aliased))
    }
}
