import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Benchmark
import Crypto
import Foundation
import Synchronization
import X509
import Kakin
import KakinLedger
import KakinServer
import KakinWire

/// The purchase server's path in process (verify, record in the SQLite ledger, read and sign the
/// answer) and the SDK's entitlement work, each against the raw P-256 verify in the same run.
///
/// The server benchmarks use a file ledger (WAL, synchronous = FULL), so each new purchase waits
/// for its commit to reach the disk; in this single-caller loop no group commit can help, which
/// makes it the worst case per request. `scripts/loadtest` measures the concurrent case over HTTP.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        scalingFactor: .one,
        maxDuration: .seconds(5),
        maxIterations: 2_000
    )

    let fixture = ServerFixture.make(purchases: 12_000)

    Benchmark("P-256 signature verify (raw)") { benchmark in
        for _ in benchmark.scaledIterations {
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: fixture.signatureBytes)
            blackHole(fixture.leafKey.isValidSignature(signature, for: fixture.signingInput))
        }
    }

    Benchmark("Server path: new purchase (verify + record + signed answer)") { benchmark in
        for _ in benchmark.scaledIterations {
            let (jws, user) = fixture.next()
            blackHole(try await fixture.ingest(jws, user: user))
        }
    }

    Benchmark("Server path: duplicate (digest lookup + read + signed answer)") { benchmark in
        let (jws, user) = fixture.duplicate
        for _ in benchmark.scaledIterations {
            blackHole(try await fixture.ingest(jws, user: user))
        }
    }

    // An app receipt as the sandbox signs it (PKCS#7, ECDSA leaf, three-certificate chain) with
    // 20 in-app purchases: parsed from base64 and verified against its root, device hash included.
    let receipt = ReceiptFixture.make(purchases: 20)
    Benchmark("Receipt: parse + verify (PKCS#7, chain, device hash)") { benchmark in
        for _ in benchmark.scaledIterations {
            let signed = try SignedAppReceipt(base64Encoded: receipt.base64)
            blackHole(
                try await signed.verify(
                    roots: [receipt.root], bundleID: "com.example.kakin", deviceIdentifier: receipt.device))
        }
    }

    let offline = OfflineEntitlements(
        directory: FileManager.default.temporaryDirectory.appendingPathComponent("kakin-bench-\(UUID())"))
    let owned = (0..<10_000).map { index in
        StoreTransaction(
            id: "\(index)", originalID: "\(index)", productID: "com.example.kakin.item\(index % 50)",
            productType: index % 3 == 0 ? .consumable : .nonConsumable, quantity: 1,
            purchaseDate: Date(timeIntervalSince1970: 1_790_000_000 + Double(index)), jwsRepresentation: "")
    }
    Benchmark("SDK: entitlements from 10,000 transactions (offline)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(await offline.customer(appUserID: "alice", transactions: owned, at: Date()))
        }
    }

    // A launch: the saved product-to-entitlement rules read from disk, then the entitlements of
    // 10,000 store transactions computed from them.
    let launchDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-bench-\(UUID())")
    Benchmark(
        "SDK: cold start, entitlements of 10,000 transactions",
        closure: { benchmark in
            for _ in benchmark.scaledIterations {
                let launched = OfflineEntitlements(directory: launchDirectory)
                blackHole(await launched.customer(appUserID: "alice", transactions: owned, at: Date()))
            }
        },
        setup: {
            try FileManager.default.createDirectory(at: launchDirectory, withIntermediateDirectories: true)
            var rules: [String: [String]] = [:]
            for item in 0..<50 { rules["com.example.kakin.item\(item)"] = ["feature\(item)"] }
            await OfflineEntitlements(directory: launchDirectory).learn(rules: rules)
        })
}

/// A service on a fresh SQLite ledger, and signed purchases to feed it.
final class ServerFixture: Sendable {
    let service: PurchaseService
    let answerKey = P256.Signing.PrivateKey()
    let purchases: [(String, String)]
    let cursor = Counter()
    let duplicate: (String, String)
    let leafKey: P256.Signing.PublicKey
    let signatureBytes: Data
    let signingInput: Data

    init(
        service: PurchaseService, purchases: [(String, String)], leafKey: P256.Signing.PublicKey,
        signatureBytes: Data, signingInput: Data
    ) {
        self.service = service
        self.purchases = Array(purchases.dropFirst())
        self.duplicate = purchases[0]
        self.leafKey = leafKey
        self.signatureBytes = signatureBytes
        self.signingInput = signingInput
    }

    /// The next purchase never posted before.
    func next() -> (String, String) { purchases[cursor.next() % purchases.count] }

    /// What `POST /v1/transactions` does past HTTP: verify, record and read the customer (one
    /// write transaction for a new purchase, one read for the same bytes again), encode and sign
    /// the answer.
    func ingest(_ jws: String, user: String) async throws -> Data {
        let (_, summary, entitlements) = try await service.submit(
            jws, bundleID: "com.example.kakin", appUserID: user, recent: 0, withJWS: false)
        let answer = SignedCustomerAnswer(
            nonce: "n", signedDate: 0,
            customer: CustomerAnswer(
                bundleId: summary.bundleID, appUserId: summary.appUserID,
                entitlements: entitlements.map {
                    .init(
                        identifier: $0.identifier, productId: $0.productID, isActive: $0.isActive,
                        transactionId: $0.transactionID, originalTransactionId: $0.originalTransactionID)
                }, balances: summary.balances, transactions: [], transactionCount: summary.transactionCount))
        let body = answer.jsonBytes()
        blackHole(try answerKey.signature(for: body))
        return Data(body)
    }

    static func make(purchases count: Int) -> ServerFixture {
        // Whole milliseconds, as the App Store signs dates.
        let now = Date(epochMilliseconds: Date().epochMilliseconds)
        let authority = try! SandboxCertificateAuthority.generate(now: now)
        let signer = JWSSigner(identity: authority.signingIdentity)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-bench-\(UUID()).sqlite").path
        let store = try! SQLiteLedger(path: path)
        try! awaitResult { try await store.migrate() }
        let service = PurchaseService(
            store: store,
            apps: [
                AppConfiguration(
                    bundleID: "com.example.kakin", environments: [.sandbox], sandboxRoots: [authority.root],
                    publicKey: "pk", secretKey: "sk")
            ],
            grants: GrantsCatalog(grants: ["com.example.kakin.increasePoints": [.currency("points", amount: 100)]]))
        var purchases: [(String, String)] = []
        for index in 0..<count {
            let id = String(9_100_000_000_000_000 + index)
            let payload = JWSTransactionDecodedPayload(
                transactionID: id, originalTransactionID: id, bundleID: "com.example.kakin",
                productID: "com.example.kakin.increasePoints", purchaseDate: now, originalPurchaseDate: now,
                quantity: 1, type: .consumable, inAppOwnershipType: .purchased, signedDate: now, environment: .sandbox,
                storefront: "USA", storefrontID: "143441", transactionReason: .purchase)
            purchases.append((try! signer.sign(payload), "user-\(index % 1_000)"))
        }
        let parts = purchases[0].0.split(separator: ".")
        var base64 = parts[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        let fixture = ServerFixture(
            service: service, purchases: purchases, leafKey: authority.leafKey.publicKey,
            signatureBytes: Data(base64Encoded: base64)!, signingInput: Data("\(parts[0]).\(parts[1])".utf8))
        let first = purchases[0]
        _ = try! awaitResult { try await fixture.ingest(first.0, user: first.1) }
        return fixture
    }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}

/// Runs async setup from the synchronous registration closure.
func awaitResult<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

/// A signed app receipt and what verifies it.
struct ReceiptFixture: Sendable {
    let base64: String
    let root: Certificate
    let device: Data

    static func make(purchases: Int) -> ReceiptFixture {
        let authority = try! SandboxCertificateAuthority.generate(now: Date())
        let device = AppReceipt.deviceIdentifier(from: UUID())
        let receipt = AppReceipt(
            receiptType: .productionSandbox, bundleID: "com.example.kakin", applicationVersion: "3",
            opaqueValue: Data((0..<16).map { UInt8($0) }), creationDate: Date(),
            inAppPurchases: (0..<purchases).map { index in
                InAppPurchaseReceipt(
                    productID: "com.example.kakin.item\(index)", transactionID: "\(1_000 + index)",
                    purchaseDate: Date())
            })
        let base64 = try! AppReceiptSigner(identity: authority.signingIdentity).signBase64(
            receipt, deviceIdentifier: device)
        return ReceiptFixture(base64: base64, root: authority.root, device: device)
    }
}
