import AppStoreModels
import AppStoreSecurity
import AppStoreTesting
import Benchmark
import Crypto
import Foundation
import StoreSandbox
import Synchronization

/// Sandbox purchases in process: `SandboxEngine.purchase` (rules, numbering, the SQLite state store
/// in a temporary directory, one SQLite transaction per purchase) and the signed transaction the
/// device receives, with no purchase stored and with 100,000 stored; each against the raw P-256
/// verify in the same run.
///
/// The history is written once in setup straight into the store (100,000 consumable purchases
/// over 1,000 testers, with their updates and notifications), then read back by the engine, as a
/// sandbox restarted on a large data directory would be.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .peakMemoryResident],
        scalingFactor: .one,
        maxDuration: .seconds(5),
        maxIterations: 20_000
    )

    Benchmark(
        "P-256 signature verify (raw)",
        closure: { benchmark in
            let fixture = try SandboxFixture.current()
            for _ in benchmark.scaledIterations {
                let signature = try P256.Signing.ECDSASignature(rawRepresentation: fixture.signatureBytes)
                blackHole(fixture.leafKey.isValidSignature(signature, for: fixture.signingInput))
            }
        },
        setup: { try await SandboxFixture.prepare(history: 0) })

    for (label, history) in [("0", 0), ("100,000", 100_000)] {
        Benchmark(
            "Sandbox purchase, \(label) stored (purchase + signed transaction)",
            closure: { benchmark in
                let fixture = try SandboxFixture.current()
                for _ in benchmark.scaledIterations { blackHole(try await fixture.purchase()) }
            },
            setup: { try await SandboxFixture.prepare(history: history) })
    }
}

/// An engine on a SQLite store in a fresh temporary directory, and a tester who buys points.
final class SandboxFixture: Sendable {
    static let testers = 1_000
    static let product = SandboxProductInfo(
        id: "com.example.kakin.points", type: .consumable, priceMilliunits: 1_990, currency: "USD")
    private static let shared = Mutex<SandboxFixture?>(nil)

    let engine: SandboxEngine
    let signer: SandboxSigner
    let clock: SandboxClock
    let testerID = "tester-0"
    let leafKey: P256.Signing.PublicKey
    let signatureBytes: Data
    let signingInput: Data

    private init(engine: SandboxEngine, signer: SandboxSigner, clock: SandboxClock, leafKey: P256.Signing.PublicKey)
        async throws
    {
        self.engine = engine
        self.signer = signer
        self.clock = clock
        self.leafKey = leafKey
        // One signed transaction, for the raw verify.
        let jws = try await Self.purchase(engine: engine, signer: signer, clock: clock, testerID: testerID)
        let parts = jws.split(separator: ".")
        var base64 = parts[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let signature = Data(base64Encoded: base64) else { throw FixtureError("the JWS signature is not base64") }
        signatureBytes = signature
        signingInput = Data("\(parts[0]).\(parts[1])".utf8)
    }

    /// The fixture the setup made.
    static func current() throws -> SandboxFixture {
        guard let fixture = shared.withLock({ $0 }) else { throw FixtureError("setup did not run") }
        return fixture
    }

    /// Makes the fixture with `history` purchases already stored, and says how long that took.
    static func prepare(history: Int) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-bench-\(UUID())")
        let now = Date()
        let clock = SandboxClock.manual(at: now)
        let authority = try SandboxCertificateAuthority.generate(now: now)
        let signer = SandboxSigner(authority: authority, bundleID: "com.example.kakin", appAppleID: 6_450_000_001)

        let started = ContinuousClock.now
        let store = try SQLiteStateStore(directory: directory)
        try store.save(Self.history(history, at: now))
        let written = ContinuousClock.now
        let engine = try SandboxEngine(
            signer: signer, clock: clock, store: store, storefrontIDs: ["USA": "143441"],
            products: { id, _ in id == product.id ? product : nil })
        let loaded = ContinuousClock.now
        if history > 0 {
            FileHandle.standardError.write(
                Data(
                    "history of \(history): written in \(written - started), read back in \(loaded - written)\n"
                        .utf8))
        }
        let fixture = try await SandboxFixture(
            engine: engine, signer: signer, clock: clock, leafKey: authority.leafKey.publicKey)
        shared.withLock { $0 = fixture }
    }

    /// A purchase and the signed transaction the device receives.
    func purchase() async throws -> String {
        try await Self.purchase(engine: engine, signer: signer, clock: clock, testerID: testerID)
    }

    private static func purchase(
        engine: SandboxEngine, signer: SandboxSigner, clock: SandboxClock, testerID: String
    ) async throws -> String {
        guard case .purchased(let transaction) = try await engine.purchase(
            PurchaseRequest(testerID: testerID, productID: product.id))
        else { throw FixtureError("the purchase did not complete") }
        return try signer.signTransaction(transaction, at: clock.now())
    }

    /// A state with the testers and `count` consumable purchases spread over them, as the engine
    /// would have stored them (each with its update and its notification event).
    private static func history(_ count: Int, at date: Date) -> SandboxState {
        var state = SandboxState()
        for index in 0..<testers {
            let id = "tester-\(index)"
            state.testers[id] = SandboxTester(id: id, name: "\(id)@example.com", createdAt: date)
        }
        for index in 0..<count {
            let testerID = "tester-\(index % testers)"
            let id = state.takeTransactionID()
            let transaction = SandboxTransaction(
                id: id, originalID: id, testerID: testerID, productID: product.id, productType: .consumable,
                purchaseDate: date, originalPurchaseDate: date, storefront: "USA", storefrontID: "143441",
                currency: "USD", priceMilliunits: product.priceMilliunits, appTransactionID: "7000000000000001",
                orderID: "MK" + String(UInt64(id) ?? 0, radix: 36, uppercase: true))
            state.transactions.append(transaction)
            state.updates.append(
                SandboxState.TransactionUpdate(sequence: state.nextUpdateSequence, transactionID: id, testerID: testerID))
            state.nextUpdateSequence += 1
            state.events.append(
                SandboxEvent(notificationType: .oneTimeCharge, transactionID: id, testerID: testerID, date: date))
        }
        return state
    }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
