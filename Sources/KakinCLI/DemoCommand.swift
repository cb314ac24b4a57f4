import ArgumentParser
import Foundation
import Kakin

/// `kakin demo`: a sample in-app purchase app in the terminal, against `kakin serve`.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "A sample in-app purchase app in the terminal: products, purchases, points, restore, against kakin serve.",
        discussion: """
            Commands (typed, or one per line with --script FILE or -): products, buy PRODUCT [QUANTITY], \
            restore, status, pending, quit. PRODUCT may be the part after the bundle ID (removeAd). \
            Without --key, the publishable key is read from DATA/keys.json of kakin serve.
            """)

    @Option(help: "The purchase server.") var server: String = "http://127.0.0.1:8080"
    @Option(help: "The sandbox App Store.") var sandbox: String = "http://127.0.0.1:8081"
    @Option(help: "The app's publishable key (default: from --serve-data/keys.json).") var key: String?
    @Option(name: .customLong("serve-data"), help: "kakin serve's data directory.") var serveData: String = "kakin-data"
    @Option(help: "The sandbox tester (created if missing).") var tester: String = "demo"
    @Option(help: "The tester's storefront: USA or JPN (and GBR, DEU, CHN).") var storefront: String = "USA"
    @Option(help: "Your app's user ID.") var user: String = "demo-user"
    @Option(help: "Where this device keeps its outbox and state.") var data: String = ".kakin-demo"
    @Option(help: "The device identifier (a new one is a fresh device).") var device: String?
    @Option(name: .customLong("bundle-id")) var bundleID: String = "com.example.kakin"
    @Option(help: "Read commands from FILE (or - for standard input) instead of a prompt.") var script: String?

    func run() async throws {
        guard let sandboxURL = URL(string: sandbox), let serverURL = URL(string: server) else {
            throw ValidationError("--server and --sandbox must be URLs")
        }
        let publishable = try key ?? Self.readKey(serveData)
        try await Self.ensureTester(sandboxURL, id: tester, storefront: storefront)
        let serverKey = try await KakinServerClient.fetchServerKey(baseURL: serverURL)
        let client = KakinServerClient(
            baseURL: serverURL, bundleID: bundleID, publishableKey: publishable, serverKey: serverKey)
        let backend = SandboxBackend(
            baseURL: sandboxURL, testerID: tester, deviceID: device.flatMap(UUID.init(uuidString:)) ?? UUID(),
            pollSeconds: 2)
        let directory = URL(fileURLWithPath: data)
        let payments = try await PaymentManager(
            backend: backend, server: client, appUserID: user, storageDirectory: directory)
        let products = ProductManager(productIDs: [], storageDirectory: directory)
        try? await products.loadProductIDs(from: client)
        // Hosted content: downloaded from the store, then the transaction is finished.
        let downloadable = Set(
            (try? await backend.products(for: await products.productIDs))?.products.filter(\.isDownloadable).map(\.id)
                ?? [])
        let downloads = DownloadManager(directory: directory.appendingPathComponent("downloads"))
        let testerID = tester
        await payments.enableDownloads(downloads) { transaction in
            downloadable.contains(transaction.productID)
                ? .sandbox(
                    sandboxURL, testerID: testerID, productID: transaction.productID, transactionID: transaction.id)
                : nil
        }
        let progress = Task {
            for await event in await downloads.events() {
                let filled = Int(event.progress * 20)
                let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 20 - filled)
                let remaining = event.timeRemaining < 0 ? "" : String(format: " %.0fs left", event.timeRemaining)
                print("download [\(bar)] \(Int(event.progress * 100))%\(remaining) \(event.state)")
            }
        }
        defer { progress.cancel() }
        if let customer = try? await payments.customerInfo() { try? await products.update(from: customer) }

        let lines: AnyIterator<String>
        if let script {
            let text =
                script == "-"
                ? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
                : try String(contentsOfFile: script, encoding: .utf8)
            var iterator = text.split(separator: "\n").map(String.init).makeIterator()
            lines = AnyIterator { iterator.next() }
        } else {
            print(
                "Kakin demo: \(user) on tester \(tester) (\(storefront)). Type products, buy removeAd, restore, status, quit."
            )
            lines = AnyIterator {
                print("> ", terminator: "")
                return readLine()
            }
        }
        for line in lines {
            let words = line.split(separator: " ").map(String.init)
            guard let command = words.first, !command.hasPrefix("#") else { continue }
            do {
                switch command {
                case "products": try await showProducts(payments, products)
                case "buy": try await buy(words, payments, products, downloads)
                case "restore":
                    let restored = try await payments.restore()
                    print("restored \(restored.count): \(restored.map(\.productID).joined(separator: ", "))")
                    try await refresh(payments, products)
                case "status": try await refresh(payments, products)
                case "pending": print("awaiting the server: \(await payments.pendingDeliveries().map(\.id))")
                case "quit", "exit": break
                default: print("unknown command \(command)")
                }
                if command == "quit" || command == "exit" { break }
            } catch {
                print("error: \(PaymentError(error))")
            }
        }
        await payments.shutdown()
    }

    func showProducts(_ payments: PaymentManager, _ products: ProductManager) async throws {
        try await products.refresh(using: payments)
        for product in await products.products {
            let name = product.displayName.padding(toLength: 28, withPad: " ", startingAt: 0)
            print("\(name) \(product.displayPrice.padding(toLength: 10, withPad: " ", startingAt: 0)) \(product.id)")
        }
    }

    func buy(
        _ words: [String], _ payments: PaymentManager, _ products: ProductManager, _ downloads: DownloadManager
    ) async throws {
        guard words.count >= 2 else { throw ValidationError("buy PRODUCT [QUANTITY]") }
        let id = words[1].contains(".") ? words[1] : "\(bundleID).\(words[1])"
        let (found, invalid) = try await payments.products(for: [id])
        guard let product = found.first else {
            print("invalid product \(id): \(invalid.first?.message ?? "")")
            return
        }
        switch try await payments.purchase(product, quantity: words.count > 2 ? Int(words[2]) ?? 1 : 1) {
        case .purchased(let transaction, let customer):
            print(
                "purchased \(product.displayName) (transaction \(transaction.id))"
                    + (customer == nil ? ", awaiting the server" : ""))
            try await refresh(payments, products)
        case .pending: print("waiting for approval (ask to buy)")
        case .cancelled: print("cancelled")
        }
    }

    func refresh(_ payments: PaymentManager, _ products: ProductManager) async throws {
        try await products.update(from: try await payments.customerInfo())
        let banner = await products.isUnlocked("removeAds") ? "(no ads)" : "[ AD BANNER ]"
        print(
            "\(banner) points: \(await products.balance(of: "points")) premium: \(await products.isUnlocked("premium"))"
        )
    }

    static func readKey(_ directory: String) throws -> String {
        let url = URL(fileURLWithPath: directory).appendingPathComponent("keys.json")
        guard let data = try? Data(contentsOf: url),
            let keys = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let key = keys["publicKey"] as? String
        else { throw ValidationError("no --key, and \(url.path) has none: start kakin serve first or pass --key") }
        return key
    }

    static func ensureTester(_ sandbox: URL, id: String, storefront: String) async throws {
        var request = URLRequest(url: sandbox.appendingPathComponent("v1/control/testers"))
        request.httpMethod = "POST"
        request.httpBody = try JSONSerialization.data(withJSONObject: [
            "id": id, "name": "\(id)@example.com", "storefront": storefront,
        ])
        _ = try? await URLSession.shared.data(for: request)
    }
}

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
