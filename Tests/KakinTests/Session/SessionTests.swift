import AppStoreModels
import Foundation
import KakinWire
import Testing

@testable import Kakin

/// The delivery path under every interleaving, with an in-memory store and server: nothing queued
/// is lost, every transaction is reported once and in order, and retries happen by themselves.
@Suite struct SessionTests {
    func session(
        _ store: FakeStore, _ server: FakeServer, user: String, directory: URL, clock: MovableClock = MovableClock(),
        sleeper: any DeliverySleeper = ManualSleeper()
    ) throws -> StoreSession {
        try StoreSession(
            backend: store, server: server.client, appUserID: user, storageDirectory: directory, now: clock.now,
            retryPolicy: RetryPolicy(base: 2, maximum: 60, jitter: 0.5, random: { 0.5 }), sleeper: sleeper)
    }

    @Test func twoUsersOnOneDeviceKeepBothQueuedPurchases() async throws {
        let directory = temporaryDirectory("two-users")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FakeStore()
        let server = FakeServer()
        server.setReachable(false)
        let alice = await PaymentManager(session: try session(store, server, user: "alice", directory: directory))
        let bob = await PaymentManager(session: try session(store, server, user: "bob", directory: directory))
        let points = store.product(FakeStore.points)
        guard case .purchased(let first, nil) = try await alice.purchase(points),
            case .purchased(let second, nil) = try await bob.purchase(points)
        else {
            Issue.record("not purchased while the server is down")
            return
        }
        let queued = try await DeliveryOutbox(directory: directory).all
        #expect(Set(queued.map(\.transaction.id)) == [first.id, second.id], "neither writer lost the other's entry")
        #expect(Dictionary(uniqueKeysWithValues: queued.map { ($0.transaction.id, $0.appUserID) })
            == [first.id: "alice", second.id: "bob"])
        await alice.shutdown()
        await bob.shutdown()

        // Next launch, server back: both are delivered, each for its own user, once.
        server.setReachable(true)
        let relaunched = await PaymentManager(session: try session(store, server, user: "alice", directory: directory))
        #expect(server.recorded == [first.id: "alice", second.id: "bob"])
        #expect(try await relaunched.customerInfo().balances["points"] == 100)
        #expect(store.finishCount(first.id) == 1 && store.finishCount(second.id) == 1)
        #expect(try await DeliveryOutbox(directory: directory).all.isEmpty)
        await relaunched.shutdown()
    }

    @Test func aReplayedTransactionIsDeliveredForTheUserWhoBoughtIt() async throws {
        let directory = temporaryDirectory("owner")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FakeStore()
        let server = FakeServer()
        // Alice paid, and the app died before it queued the purchase.
        let token = StoreSession.accountToken(for: "alice")
        #expect(token == StoreSession.accountToken(for: "alice") && token != StoreSession.accountToken(for: "bob"))
        try await DeliveryOutbox(directory: directory).register(token: token, for: "alice")
        guard case .purchased(let paid) = try await store.purchase(FakeStore.points, quantity: 1, appAccountToken: token)
        else { return }
        // Bob opens the app next: the launch replay delivers the purchase for Alice, not for Bob.
        let bob = await PaymentManager(session: try session(store, server, user: "bob", directory: directory))
        #expect(server.owner(paid.id) == "alice")
        // So does an update the store sends while Bob is signed in (an approval, say).
        let stream = await bob.session.outbox.all
        #expect(stream.isEmpty)
        let approved = store.makeTransaction(FakeStore.removeAd, token: token)
        let aliceEvents = await PaymentManager(session: bob.session, appUserID: "alice")
        let events = await aliceEvents.statusUpdates()
        store.pushUpdate(approved)
        #expect(await collect(1, from: events) == [.purchased(approved)])
        #expect(server.owner(approved.id) == "alice")
        await bob.shutdown()
    }

    @Test func manyUsersAndManagersBuyingAtOnceLoseNothingThenDeliverOnce() async throws {
        let directory = temporaryDirectory("many-users")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FakeStore()
        let server = FakeServer()
        server.setReachable(false)
        let users = (1...6).map { "user \($0)" }
        // Two managers per user, each on a session of its own: the worst case, many writers.
        var managers: [(String, PaymentManager)] = []
        for user in users {
            for _ in 0..<2 {
                managers.append((user, await PaymentManager(session: try session(store, server, user: user, directory: directory))))
            }
        }
        let bought = try await withThrowingTaskGroup(of: [String: String].self) { group in
            for (user, manager) in managers {
                group.addTask {
                    var ids: [String: String] = [:]
                    for _ in 0..<4 {
                        if case .purchased(let transaction, _) = try await manager.purchase(store.product(FakeStore.points)) {
                            ids[transaction.id] = user
                        }
                    }
                    return ids
                }
            }
            return try await group.reduce(into: [:]) { $0.merge($1) { a, _ in a } }
        }
        #expect(bought.count == managers.count * 4)
        let queued = try await DeliveryOutbox(directory: directory).all
        #expect(Dictionary(uniqueKeysWithValues: queued.map { ($0.transaction.id, $0.appUserID) }) == bought)
        // The app is killed: nothing is shut down, the sessions are simply dropped.
        managers.removeAll()

        server.setReachable(true)
        let relaunched = await PaymentManager(session: try session(store, server, user: "user 1", directory: directory))
        #expect(server.recorded == bought, "every purchase reached the server for its own user")
        for id in bought.keys {
            #expect(server.deliveries(id) == 1, "delivered once")
            #expect(store.finishCount(id) == 1, "finished once")
        }
        for user in users {
            let expected = Int64(bought.values.filter { $0 == user }.count * 100)
            #expect(try await relaunched.session.customer(appUserID: user).balances["points"] == expected)
        }
        await relaunched.shutdown()
    }

    @Test func eachTransactionIsReportedOnceAndInOrder() async throws {
        let directory = temporaryDirectory("order")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FakeStore()
        let server = FakeServer()
        let payments = await PaymentManager(session: try session(store, server, user: "carol", directory: directory))
        let delegate = RecordingDelegate()
        await payments.setDelegate(delegate)
        let stream = await payments.statusUpdates()
        var expected: [PaymentStatus] = []
        for _ in 0..<5 {
            guard case .purchased(let transaction, _) = try await payments.purchase(store.product(FakeStore.points))
            else { return }
            expected += [.purchasing(productID: FakeStore.points), .purchased(transaction)]
        }
        let streamed = await collect(expected.count, from: stream)
        #expect(streamed == expected)
        // The delegate hears the same events, in the same order, once each.
        await payments.shutdown()
        #expect(delegate.statuses.withLock { $0 } == expected)
        #expect(delegate.completed.withLock { $0 } == expected.compactMap {
            if case .purchased(let transaction) = $0 { return transaction.id }
            return nil
        })
    }

    @Test func aRestoredTransactionCompletesOnceAsRestored() async throws {
        let directory = temporaryDirectory("restore")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FakeStore()
        let server = FakeServer()
        let owned = store.makeTransaction(FakeStore.removeAd)
        store.state.withLock { $0.owned = [owned] }
        let payments = await PaymentManager(session: try session(store, server, user: "dan", directory: directory))
        let delegate = RecordingDelegate()
        await payments.setDelegate(delegate)
        let stream = await payments.statusUpdates()
        let restored = try await payments.restore()
        #expect(restored.map(\.id) == [owned.id])
        #expect(await collect(2, from: stream) == [.restored(owned), .restoreFinished])
        await payments.shutdown()
        #expect(delegate.completed.withLock { $0 } == [owned.id], "completePayment once, not purchased then restored")
        #expect(delegate.statuses.withLock { $0 } == [.restored(owned), .restoreFinished])
    }

    @Test func eachDeliveryReturnsItsOwnAnswer() async throws {
        let directory = temporaryDirectory("answers")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FakeStore()
        let server = FakeServer()
        let shared = try session(store, server, user: "erin", directory: directory)
        let erin = await PaymentManager(session: shared, appUserID: "erin")
        let frank = await PaymentManager(session: shared, appUserID: "frank")
        // Both deliveries are in flight together and answered in reverse order.
        server.holdUntil(2)
        async let first = erin.purchase(store.product(FakeStore.points))
        async let second = frank.purchase(store.product(FakeStore.removeAd))
        let (a, b) = try await (first, second)
        guard case .purchased(_, let erinAnswer?) = a, case .purchased(_, let frankAnswer?) = b else {
            Issue.record("not answered: \(a) \(b)")
            return
        }
        #expect(erinAnswer.appUserID == "erin" && erinAnswer.balances["points"] == 100)
        #expect(frankAnswer.appUserID == "frank" && frankAnswer.isEntitled(to: "removeAds"))
        await erin.shutdown()
    }

    @Test func retriesAreScheduledWithBackoffAndResumeByThemselves() async throws {
        let directory = temporaryDirectory("retry")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FakeStore()
        let server = FakeServer()
        let clock = MovableClock()
        let sleeper = ManualSleeper()
        server.setReachable(false)
        let payments = await PaymentManager(
            session: try session(store, server, user: "gina", directory: directory, clock: clock, sleeper: sleeper))
        let stream = await payments.statusUpdates()
        guard case .purchased(let transaction, nil) = try await payments.purchase(store.product(FakeStore.removeAd))
        else { return }
        // First failure: 2 s, less up to half at random (the test's random is 0.5): 1.5 s.
        #expect(await sleeper.nextRequest() == clock.now().addingTimeInterval(1.5))
        #expect(await collect(2, from: stream).last == .awaitingServer(transaction))

        // Still down at the retry: the next wait is twice as long, and no second awaitingServer event.
        clock.advance(1.5)
        sleeper.wake()
        #expect(await sleeper.nextRequest() == clock.now().addingTimeInterval(3))
        // The server comes back: the retry delivers without any call from the app.
        server.setReachable(true)
        clock.advance(3)
        sleeper.wake()
        #expect(await collect(1, from: stream) == [.purchased(transaction)])
        #expect(server.deliveries(transaction.id) == 1)
        #expect(store.finishCount(transaction.id) == 1)
        #expect(await payments.pendingDeliveries().isEmpty)
        await payments.shutdown()
    }

    @Test func aLaunchTriesWhatAnEarlierRunQueuedThenRetriesOnSchedule() async throws {
        let directory = temporaryDirectory("resume")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = MovableClock()
        let store = FakeStore()
        let transaction = store.makeTransaction(FakeStore.removeAd)
        let outbox = try DeliveryOutbox(directory: directory)
        try await outbox.enqueue(transaction, appUserID: "hana", now: clock.now())
        try await outbox.failed(transaction.id, error: "offline", retryAt: clock.now().addingTimeInterval(40), now: clock.now())
        let sleeper = ManualSleeper()
        let server = FakeServer()
        server.setReachable(false)
        // The launch tries at once, although the entry's retry was 40 s away; it fails again, so
        // the next retry follows the backoff of its second attempt (2 × 2 s, less a quarter).
        let payments = await PaymentManager(
            session: try session(store, server, user: "hana", directory: directory, clock: clock, sleeper: sleeper))
        #expect(await sleeper.nextRequest() == clock.now().addingTimeInterval(3))
        #expect(try await DeliveryOutbox(directory: directory).all.first?.attempts == 2)
        let stream = await payments.statusUpdates()
        server.setReachable(true)
        clock.advance(3)
        sleeper.wake()
        _ = await firstStatus(in: stream) { $0 == .purchased(transaction) }
        #expect(server.owner(transaction.id) == "hana")
        await payments.shutdown()
    }

    @Test func aKeptAnswerDoesNotUnlockALapsedSubscription() {
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let customer = CustomerInfo(
            appUserID: "lee",
            entitlements: [
                .init(
                    identifier: "premium", productID: FakeStore.premium, isActive: true,
                    expiresDate: now.addingTimeInterval(60), revocationDate: nil, transactionID: "1",
                    originalTransactionID: "1")
            ], balances: [:])
        #expect(customer.isEntitled(to: "premium", at: now))
        #expect(!customer.isEntitled(to: "premium", at: now.addingTimeInterval(61)))
    }

    @Test func retryDelaysGrowUpToTheMaximumWithJitter() {
        let fixed = RetryPolicy(base: 2, maximum: 100, jitter: 0, random: { 0.9 })
        #expect((0..<8).map { fixed.delay(afterAttempts: $0) } == [2, 4, 8, 16, 32, 64, 100, 100])
        let jittered = RetryPolicy(base: 10, maximum: 100, jitter: 0.5, random: { 0.999 })
        #expect(jittered.delay(afterAttempts: 0) > 5 && jittered.delay(afterAttempts: 0) <= 10)
        #expect(RetryPolicy(jitter: 7).jitter == 1, "jitter is a share")
        var changed = RetryPolicy(base: 2, maximum: 100, jitter: 0.5, random: { 0.5 })
        changed.jitter = 7
        #expect(changed.delay(afterAttempts: 0) == 1, "a share above 1 counts as 1: never a negative delay")
    }

    @Test func aPermanentRejectionIsReportedOnceWithItsCause() async throws {
        let directory = temporaryDirectory("rejected")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FakeStore()
        let server = FakeServer()
        server.refuse("1001")
        let payments = await PaymentManager(session: try session(store, server, user: "ivan", directory: directory))
        let delegate = RecordingDelegate()
        await payments.setDelegate(delegate)
        let stream = await payments.statusUpdates()
        guard case .purchased(let transaction, nil) = try await payments.purchase(store.product(FakeStore.removeAd))
        else { return }
        #expect(transaction.id == "1001")
        let events = await collect(2, from: stream)
        guard case .failed(let productID, .serverRejected(let error)) = events.last else {
            Issue.record("no rejection: \(events)")
            return
        }
        #expect(productID == FakeStore.removeAd)
        #expect(error.cause == "badSignature" && error.serverCode == "verificationFailed" && !error.isRetryable)
        // Not retried, not finished, reported once; the app can list it.
        #expect(await payments.deliverPending() == 0)
        await payments.shutdown()
        #expect(delegate.errors.withLock { $0 }.count == 1)
        #expect(store.finishCount(transaction.id) == 0)
        #expect(await payments.rejectedDeliveries().map(\.transaction.id) == [transaction.id])
    }

    @Test func canMakePaymentsTellsAFailureFromARefusal() async throws {
        let directory = temporaryDirectory("can-pay")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FakeStore()
        let payments = await PaymentManager(session: try session(store, FakeServer(), user: "jo", directory: directory))
        #expect(try await payments.canMakePayments())
        store.setPermission(.denied)
        #expect(try await payments.canMakePayments() == false)
        store.setPermission(.unreachable)
        await #expect(throws: KakinError.self) { try await payments.canMakePayments() }
        do {
            _ = try await payments.purchase(store.product(FakeStore.removeAd))
            Issue.record("bought although the store could not be asked")
        } catch {
            #expect(PaymentError(error) == .network, "a network failure, not 'purchases are not allowed'")
        }
        await payments.shutdown()
    }

    @Test func offlineEntitlementsComeFromTheStoreUntilTheServerAnswersAgain() async throws {
        let directory = temporaryDirectory("offline")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FakeStore()
        let server = FakeServer()
        let clock = MovableClock()
        let shared = try session(store, server, user: "kim", directory: directory, clock: clock)
        try await shared.refreshCatalog()
        let payments = await PaymentManager(session: shared)
        _ = try await payments.purchase(store.product(FakeStore.removeAd))
        _ = try await payments.purchase(store.product(FakeStore.points))
        let online = try await payments.customerInfo()
        #expect(online.source == .server && online.isEntitled(to: "removeAds") && online.balances["points"] == 100)

        // A subscription bought elsewhere and the server unreachable: the device's own answer.
        let elsewhere = store.makeTransaction(FakeStore.premium, expires: Date.distantFuture)
        store.state.withLock { $0.owned.append(elsewhere) }
        server.setReachable(false)
        let offline = try await payments.customerInfo()
        #expect(offline.source == .device && offline.isProvisional)
        #expect(offline.isEntitled(to: "removeAds", at: clock.now()) && offline.isEntitled(to: "premium", at: clock.now()))
        #expect(offline.balances["points"] == 100, "the last balance the server confirmed")
        await #expect(throws: KakinError.self) { try await payments.customerInfo(allowOffline: false) }

        // A relaunched app remembers what it learned.
        let products = ProductManager(productIDs: [], storageDirectory: directory)
        try await products.update(from: offline)
        #expect(await products.snapshot.isProvisional)
        server.setReachable(true)
        let back = try await payments.customerInfo()
        #expect(back.source == .server && !back.isEntitled(to: "premium"), "the server's answer replaces the device's")
        try await products.update(from: back)
        #expect(await products.snapshot.isProvisional == false)
        await payments.shutdown()
    }

    @Test func offlineEntitlementsLastAtMostTheGracePeriodAfterTheServerLastAnswered() async throws {
        let directory = temporaryDirectory("offline-grace")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FakeStore()
        let server = FakeServer()
        let clock = MovableClock()
        let shared = try session(store, server, user: "noa", directory: directory, clock: clock)
        try await shared.refreshCatalog()
        let payments = await PaymentManager(session: shared)
        _ = try await payments.purchase(store.product(FakeStore.removeAd))
        let answered = clock.now()
        #expect(try await payments.customerInfo().source == .server)

        // Two days without the server: still granted, and the entitlement says when that ends.
        server.setReachable(false)
        clock.advance(2 * 86_400)
        let within = try await payments.customerInfo()
        #expect(within.source == .device && within.isEntitled(to: "removeAds", at: clock.now()))
        let end = answered.addingTimeInterval(OfflineEntitlements.defaultGracePeriod)
        #expect(within.entitlements.first { $0.identifier == "removeAds" }?.expiresDate == end)
        // A kept answer lapses at the end of the grace period too.
        #expect(!within.isEntitled(to: "removeAds", at: end.addingTimeInterval(1)))

        // Past three days without an answer: the device grants nothing more.
        clock.advance(1.5 * 86_400)
        let beyond = try await payments.customerInfo()
        #expect(beyond.source == .device && !beyond.isEntitled(to: "removeAds", at: clock.now()))
        #expect(beyond.entitlements.first?.isActive == false)

        // The server answers again: its answer counts, and the grace period starts again.
        server.setReachable(true)
        #expect(try await payments.customerInfo().isEntitled(to: "removeAds", at: clock.now()))
        server.setReachable(false)
        clock.advance(86_400)
        #expect(try await payments.customerInfo().isEntitled(to: "removeAds", at: clock.now()))
        await payments.shutdown()
    }

    @Test func theSDKLinksOnlyModelsTheCoreTheContractCryptoZIPFoundationAndFoundation() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let target = try #require(manifest.range(of: ".target(\n            name: \"Kakin\",\n"))
        let rest = manifest[target.upperBound...]
        let block = rest[..<(try #require(rest.range(of: "swiftSettings:"))).lowerBound]
        let dependencies = try #require(block.range(of: "dependencies: ["))
        let list = block[dependencies.upperBound...].prefix { $0 != "]" }
        let names = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty }
        #expect(
            names == [
                #""AppStoreModels""#, #""KakinCore""#, #""KakinWire""#, #".product(name: "Crypto""#, #"package: "swift-crypto")"#,
                #".product(name: "ZIPFoundation""#, #"package: "ZIPFoundation")"#,
            ])
        let sources = root.appendingPathComponent("Sources/Kakin")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for forbidden in ["import AppStoreSecurity", "import KakinServer", "import StoreSandbox", "import Hummingbird"] {
                #expect(!text.contains(forbidden), "\(file.lastPathComponent) has \(forbidden)")
            }
        }
    }
}
