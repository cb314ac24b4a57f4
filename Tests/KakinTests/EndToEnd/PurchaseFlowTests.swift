import AppStoreModels
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import StoreSandbox
import Synchronization
import Testing

@testable import Kakin

@Suite(.serialized) struct PurchaseFlowTests {
    @Test func purchaseIsDeliveredThenFinished() async throws {
        let stack = try await LiveStack()
        try await stack.run { sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "jp@example.com", storefront: "JPN", id: "jp")
            let payments = try await PaymentManager(
                backend: SandboxBackend(baseURL: sandboxURL, testerID: "jp", pollSeconds: 1),
                server: stack.client(serverURL),
                appUserID: "alice", storageDirectory: stack.directory.appendingPathComponent("a"))
            let (products, invalid) = try await payments.products(for: [
                "com.example.kakin.removeAd", "com.example.kakin.nope",
            ])
            #expect(products.first?.displayPrice == "¥100")
            #expect(invalid.map(\.id) == ["com.example.kakin.nope"])
            guard case .purchased(let transaction, let customer) = try await payments.purchase(products[0]) else {
                Issue.record("not purchased")
                return
            }
            let errors = await payments.session.outbox.all.map { $0.lastError ?? "" }
            #expect(customer?.isEntitled(to: "removeAds") == true, "\(errors)")
            #expect(
                try await stack.engine.transaction(transaction.id).isFinished,
                "finished after the server acknowledged it")
            #expect(await payments.pendingDeliveries().isEmpty)
            await payments.shutdown()
        }
    }

    @Test func consumablesAddUpAndCancelAndFailureAreReported() async throws {
        let stack = try await LiveStack()
        try await stack.run { sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "us@example.com", id: "us")
            let payments = try await PaymentManager(
                backend: SandboxBackend(baseURL: sandboxURL, testerID: "us", pollSeconds: 1),
                server: stack.client(serverURL),
                appUserID: "bob", storageDirectory: stack.directory.appendingPathComponent("b"))
            let points = try #require(
                try await payments.products(for: ["com.example.kakin.increasePoints"]).products.first)
            _ = try await payments.purchase(points)
            guard case .purchased(_, let customer) = try await payments.purchase(points) else {
                Issue.record("not purchased")
                return
            }
            #expect(customer?.balances["points"] == 200)

            try await stack.engine.updateSettings(SandboxSettings(failPurchasesWith: .paymentCancelled))
            #expect(try await payments.purchase(points) == .cancelled)
            try await stack.engine.updateSettings(SandboxSettings(failPurchasesWith: .paymentInvalid))
            do {
                _ = try await payments.purchase(points)
                Issue.record("a failed purchase succeeded")
            } catch {
                #expect(PaymentError(error) == .invalidPayment)
            }
            try await stack.engine.updateSettings(SandboxSettings())
            var tester = try await stack.engine.tester("us")
            tester.canMakePayments = false
            try await stack.engine.updateTester(tester)
            #expect(try await payments.canMakePayments() == false)
            await #expect(throws: KakinError.self) { try await payments.purchase(points) }
            await payments.shutdown()
        }
    }

    @Test func askToBuyArrivesThroughTheUpdateStream() async throws {
        let stack = try await LiveStack()
        try await stack.run { sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "kid@example.com", id: "kid")
            var tester = try await stack.engine.tester("kid")
            tester.asksToBuy = true
            try await stack.engine.updateTester(tester)
            let payments = try await PaymentManager(
                backend: SandboxBackend(baseURL: sandboxURL, testerID: "kid", pollSeconds: 1),
                server: stack.client(serverURL),
                appUserID: "kid-user", storageDirectory: stack.directory.appendingPathComponent("c"))
            let statuses = await payments.statusUpdates()
            let product = try #require(try await payments.products(for: ["com.example.kakin.unlock"]).products.first)
            #expect(try await payments.purchase(product) == .pending)
            let pending = try #require(await stack.engine.pendingPurchases(of: "kid").first)
            _ = try await stack.engine.approve(pending.id)
            let delivered = await firstStatus(in: statuses) {
                if case .purchased = $0 { return true }
                return false
            }
            #expect(delivered != nil)
            #expect(try await payments.customerInfo().isEntitled(to: "unlock"))
            await payments.shutdown()
        }
    }

    @Test func restoreOnAFreshDeviceAndOneObserverPerStore() async throws {
        let stack = try await LiveStack()
        try await stack.run { sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "r@example.com", id: "r")
            let backend = SandboxBackend(baseURL: sandboxURL, testerID: "r", pollSeconds: 1)
            let directory = stack.directory.appendingPathComponent("d")
            // Two managers on one session: one observer, one upload (an observer registered twice
            // would upload the same purchase twice).
            let session = try StoreSession(
                backend: backend, server: stack.client(serverURL), appUserID: "carol", storageDirectory: directory)
            let first = await PaymentManager(session: session)
            let second = await PaymentManager(session: session)
            let product = try #require(try await first.products(for: ["com.example.kakin.removeAd"]).products.first)
            _ = try await first.purchase(product)
            #expect(await second.deliverPending() == 0)
            // Read without blocking a thread: the server answering runs in this process.
            let metrics = String(
                decoding: try await URLSession.shared.data(from: serverURL.appendingPathComponent("metrics")).0,
                as: UTF8.self)
            #expect(
                metrics.contains(
                    "kakin_http_requests_total{route=\"/v1/transactions\",method=\"POST\",status=\"200\"} 1"))

            // A fresh device: a new storage directory and device ID, same tester.
            let fresh = try await PaymentManager(
                backend: SandboxBackend(baseURL: sandboxURL, testerID: "r", deviceID: UUID(), pollSeconds: 1),
                server: stack.client(serverURL),
                appUserID: "carol", storageDirectory: stack.directory.appendingPathComponent("fresh"))
            let restored = try await fresh.restore()
            #expect(restored.map(\.productID) == ["com.example.kakin.removeAd"])
            #expect(try await fresh.customerInfo().isEntitled(to: "removeAds"))
            await first.shutdown()
            await fresh.shutdown()
        }
    }

    @Test func serverDownDuringPurchaseThenBack() async throws {
        let stack = try await LiveStack()
        try await stack.run { sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "d@example.com", id: "down")
            let directory = stack.directory.appendingPathComponent("down")
            let backend = SandboxBackend(baseURL: sandboxURL, testerID: "down", pollSeconds: 1)
            let unreachable = stack.unreachableClient()
            let offline = try await PaymentManager(
                backend: backend, server: unreachable, appUserID: "dave", storageDirectory: directory)
            let product = try #require(
                try await offline.products(for: ["com.example.kakin.increasePoints"]).products.first)
            guard case .purchased(let transaction, let customer) = try await offline.purchase(product) else {
                Issue.record("not purchased")
                return
            }
            #expect(customer == nil)
            #expect(await offline.pendingDeliveries().map(\.id) == [transaction.id])
            #expect(
                try await stack.engine.transaction(transaction.id).isFinished == false,
                "not finished while unacknowledged")

            // The app restarts with the server back: the outbox on disk is delivered, once.
            await offline.shutdown()
            let online = try await PaymentManager(
                backend: SandboxBackend(baseURL: sandboxURL, testerID: "down", pollSeconds: 1),
                server: stack.client(serverURL),
                appUserID: "dave", storageDirectory: directory,
                now: { Date().addingTimeInterval(3600) })
            _ = await online.deliverPending()
            #expect(try await online.customerInfo().balances["points"] == 100)
            #expect(try await stack.engine.transaction(transaction.id).isFinished)
            await online.shutdown()
        }
    }
}

extension PurchaseFlowTests {
    @Test func hostedContentIsDownloadedBeforeTheTransactionIsFinished() async throws {
        let stack = try await LiveStack()
        try await stack.run { sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "c@example.com", id: "content")
            let payments = try await PaymentManager(
                backend: SandboxBackend(baseURL: sandboxURL, testerID: "content", pollSeconds: 1),
                server: stack.client(serverURL), appUserID: "erin",
                storageDirectory: stack.directory.appendingPathComponent("e"))
            let downloads = DownloadManager(
                directory: stack.directory.appendingPathComponent("downloads"), transport: URLSessionDownloadTransport()
            )
            await payments.enableDownloads(downloads) { transaction in
                transaction.productID == "com.example.kakin.soundPack"
                    ? .sandbox(
                        sandboxURL, testerID: "content", productID: transaction.productID, transactionID: transaction.id
                    ) : nil
            }
            let product = try #require(try await payments.products(for: ["com.example.kakin.soundPack"]).products.first)
            #expect(product.isDownloadable)
            guard case .purchased(let transaction, let customer) = try await payments.purchase(product) else {
                Issue.record("not purchased")
                return
            }
            #expect(customer?.isEntitled(to: "soundPack") == true)
            let folder = try #require(await downloads.contentURL(forProductID: "com.example.kakin.soundPack"))
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("content.bin").path))
            #expect(folder.lastPathComponent == "1.0")
            #expect(try await stack.engine.transaction(transaction.id).isFinished)
            await payments.shutdown()
        }
    }

    /// A purchase of a product with content that an earlier launch could not deliver (the server
    /// was down) gets its content at the next launch, before it is finished: the store's
    /// configuration names the content, so the launch's first delivery already downloads it.
    @Test func contentOfAPurchaseLeftByAnEarlierLaunchIsDownloadedBeforeItIsFinished() async throws {
        let stack = try await LiveStack()
        try await stack.run { sandboxURL, serverURL in
            _ = try await stack.engine.createTester(name: "f@example.com", id: "left")
            let directory = stack.directory.appendingPathComponent("left")
            let backend = SandboxBackend(baseURL: sandboxURL, testerID: "left", pollSeconds: 1)
            let unreachable = stack.unreachableClient()
            let offline = try await PaymentManager(
                backend: backend, server: unreachable, appUserID: "fumi", storageDirectory: directory)
            let product = try #require(try await offline.products(for: ["com.example.kakin.soundPack"]).products.first)
            guard case .purchased(let transaction, nil) = try await offline.purchase(product) else {
                Issue.record("expected a purchase the server has not acknowledged")
                return
            }
            await offline.shutdown()
            #expect(try await stack.engine.transaction(transaction.id).isFinished == false)

            // The next launch, with the server back.
            let downloads = DownloadManager(
                directory: stack.directory.appendingPathComponent("left-downloads"),
                transport: URLSessionDownloadTransport())
            let asked = Mutex<[String]>([])
            let content = KakinStore.HostedContent(downloads: downloads) { transaction, appUserID, _ in
                asked.withLock { $0.append(appUserID) }
                return transaction.productID == "com.example.kakin.soundPack"
                    ? .sandbox(sandboxURL, testerID: "left", productID: transaction.productID, transactionID: transaction.id)
                    : nil
            }
            let store = try await KakinStore.configure(
                .init(
                    serverURL: serverURL, bundleID: LiveStack.bundleID, publishableKey: "pk_test",
                    serverKey: stack.serverKey.publicKey, appUserID: "fumi", storageDirectory: directory,
                    hostedContent: content),
                backend: SandboxBackend(baseURL: sandboxURL, testerID: "left", pollSeconds: 1))
            #expect(asked.withLock { $0 } == ["fumi"], "asked for the user the purchase was delivered for")
            let folder = try #require(await downloads.contentURL(forProductID: "com.example.kakin.soundPack"))
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("content.bin").path))
            #expect(try await stack.engine.transaction(transaction.id).isFinished)
            #expect(await store.customerInfo?.isEntitled(to: "soundPack") == true)
            await store.shutdown()
        }
    }
}
