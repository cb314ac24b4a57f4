import ArgumentParser
import Foundation
import KakinCore
import KakinWire
import Kakin
import KakinServer

/// `kakin demo`: a sample in-app purchase app in the terminal, against `kakin serve`.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "A sample in-app purchase app in the terminal: products, purchases, points, restore, against kakin serve.",
        discussion: """
            Commands (typed, or one per line with --script FILE or -): products, buy PRODUCT [QUANTITY], \
            restore, status, pending, whoami, login USER, logout, quit. PRODUCT may be the part after the \
            bundle ID (removeAd, premium.monthly). Without --user the app starts as an anonymous customer \
            that the device keeps in --data: buy, then `login USER` moves what it bought to USER; \
            `logout` starts a new anonymous customer. Restore runs in the background: the prompt stays \
            usable while content downloads. Without --key, the publishable key is read from \
            DATA/keys.json of kakin serve. Against a server that requires customer tokens, pass the \
            app's customerTokens secret with --customer-token-secret: the demo then plays the app's \
            backend too, and signs a short-lived token for each identified customer it asks about.
            """)

    @Option(help: "The purchase server.") var server: String = "http://127.0.0.1:8080"
    @Option(help: "The sandbox App Store.") var sandbox: String = "http://127.0.0.1:8081"
    @Option(help: "The app's publishable key (default: from --serve-data/keys.json).") var key: String?
    @Option(name: .customLong("serve-data"), help: "kakin serve's data directory.") var serveData: String = "kakin-data"
    @Option(help: "The sandbox tester (created if missing).") var tester: String = "demo"
    @Option(help: "The tester's storefront: USA or JPN (and GBR, DEU, CHN).") var storefront: String = "USA"
    @Option(help: "Your app's user ID (default: the customer this device keeps, anonymous at first).")
    var user: String?
    @Option(help: "Where this device keeps its outbox and state.") var data: String = ".kakin-demo"
    @Option(help: "The device identifier (a new one is a fresh device).") var device: String?
    @Option(name: .customLong("bundle-id")) var bundleID: String = "com.example.kakin"
    @Option(help: "Read commands from FILE (or - for standard input) instead of a prompt.") var script: String?
    @Option(
        name: .customLong("customer-token-secret"),
        help: "The app's customerTokens secret: sign customer tokens for identified customers, as the app's backend does."
    )
    var customerTokenSecret: String?

    func run() async throws {
        guard let sandboxURL = URL(string: sandbox), let serverURL = URL(string: server) else {
            throw ValidationError("--server and --sandbox must be URLs")
        }
        let publishable = try key ?? Self.readKey(serveData)
        try await Self.ensureTester(sandboxURL, id: tester, storefront: storefront)
        let serverKey = try await KakinServerClient.fetchServerKey(baseURL: serverURL)
        let client = KakinServerClient(
            baseURL: serverURL, bundleID: bundleID, publishableKey: publishable, serverKey: serverKey,
            customerToken: customerTokenSecret.map { Self.tokenProvider(secret: $0, bundleID: bundleID) })
        let backend = SandboxBackend(
            baseURL: sandboxURL, testerID: tester, deviceID: device.flatMap(UUID.init(uuidString:)) ?? UUID(),
            pollSeconds: 2)
        let directory = URL(fileURLWithPath: data)
        // Without --user, the customer the device keeps: an anonymous one until someone logs in.
        let identity = DeviceIdentity(directory: directory)
        let user = try self.user ?? identity.current()
        let payments = try await PaymentManager(
            backend: backend, server: client, appUserID: user, storageDirectory: directory)
        let store = await KakinStore(session: payments.session, payments: payments, server: client, identity: identity)
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
            // On a terminal the bar redraws in place; in a log, one line per state change.
            let inPlace = TerminalText.isTerminal
            var lastState: [String: DownloadState] = [:]
            for await event in await downloads.events() {
                let bar = TerminalText.progressBar(Double(event.progress), secondsLeft: event.timeRemaining)
                let line = "download \(shortName(event.download.productID)) \(bar) \(event.state)"
                let ended = [.finished, .failed, .cancelled].contains(event.state)
                if inPlace {
                    print(TerminalText.redraw + line, terminator: ended ? "\n" : "")
                    fflush(nil)
                } else if lastState[event.id] != event.state {
                    print(line)
                }
                lastState[event.id] = event.state
            }
        }
        defer { progress.cancel() }
        // Work that must not block the prompt (a restore that downloads content), awaited at quit.
        var background: [Task<Void, Never>] = []
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
                "Kakin demo: \(Self.describe(user)) on tester \(tester) (\(storefront)). "
                    + "Type products, buy removeAd, restore, status, login USER, logout, quit."
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
                    print("restoring in the background…")
                    background.append(
                        Task {
                            do {
                                let restored = try await payments.restore()
                                print(
                                    "restored \(restored.count): \(restored.map(\.productID).joined(separator: ", "))")
                                try await refresh(payments, products)
                            } catch {
                                print("error: \(PaymentError(error))")
                            }
                        })
                case "status": try await refresh(payments, products)
                case "whoami": print(Self.describe(payments.appUserID))
                case "login":
                    guard words.count == 2 else { throw ValidationError("login USER") }
                    let before = payments.appUserID
                    try await store.logIn(words[1])
                    print("logged in as \(words[1]) (was \(Self.describe(before)))")
                    try await refresh(payments, products)
                case "logout":
                    try await store.logOut()
                    print("logged out: \(Self.describe(payments.appUserID))")
                    try await refresh(payments, products)
                case "pending": print("awaiting the server: \(await payments.pendingDeliveries().map(\.id))")
                case "quit", "exit": break
                default: print("unknown command \(command)")
                }
                if command == "quit" || command == "exit" { break }
            } catch {
                print("error: \(PaymentError(error))")
            }
        }
        for task in background { await task.value }
        await payments.shutdown()
    }

    func showProducts(_ payments: PaymentManager, _ products: ProductManager) async throws {
        try await products.refresh(using: payments)
        let rows = await products.products.map { [$0.displayName, $0.displayPrice, shortName($0.id)] }
        for line in TerminalText.table([["product", "price", "buy as"]] + rows) { print(line) }
    }

    func buy(
        _ words: [String], _ payments: PaymentManager, _ products: ProductManager, _ downloads: DownloadManager
    ) async throws {
        guard words.count >= 2 else { throw ValidationError("buy PRODUCT [QUANTITY]") }
        let id = productID(words[1])
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

    /// A product ID from what the user typed: a full ID (`com.example.kakin.premium.monthly`) or
    /// the part after the bundle ID, which may itself hold dots (`premium.monthly`).
    func productID(_ typed: String) -> String {
        typed.hasPrefix(bundleID + ".") ? typed : "\(bundleID).\(typed)"
    }

    /// The name to type for a product: its ID without the bundle ID.
    func shortName(_ productID: String) -> String {
        productID.hasPrefix(bundleID + ".") ? String(productID.dropFirst(bundleID.count + 1)) : productID
    }

    /// A customer for people: an anonymous one is said to be so.
    static func describe(_ appUserID: String) -> String {
        AnonymousAppUserID.isAnonymous(appUserID) ? "anonymous customer \(appUserID)" : appUserID
    }

    /// Customer tokens as an app's backend signs them for its signed-in user: five minutes long.
    static func tokenProvider(secret: String, bundleID: String) -> CustomerTokenProvider {
        let key = CustomerTokenPolicy(secret: secret, required: true).secret
        return { appUserID in
            CustomerToken.mint(appUserID: appUserID, bundleID: bundleID, secret: key, lifetime: 300)
        }
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
        _ = try? await URLSession.shared.cancellableData(for: request)
    }
}

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
