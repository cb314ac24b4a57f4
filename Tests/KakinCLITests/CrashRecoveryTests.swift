import AppStoreSecurity
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinServer
import StoreSandbox
import Testing

/// A real `kakin demo` process is killed with SIGKILL at every point of the purchase path; the next
/// run of the app delivers what was left, and the server grants each purchase exactly once.
@Suite struct CrashRecoveryTests {
    static let crashPoints = ["afterPurchase", "afterEnqueue", "beforeDelivery", "afterDelivery", "afterFinish"]

    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func killingTheAppAnywhereLosesNothingAndGrantsOnce() async throws {
        let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/Catalog")
        let authority = try SandboxCertificateAuthority.generate()
        let catalog = try SandboxCatalog.load(storeKitFile: examples.appendingPathComponent("Kakin.storekit"))
        let engine = try SandboxEngine(
            signer: SandboxSigner(authority: authority, bundleID: "com.example.kakin", appAppleID: 6_450_000_001),
            clock: SandboxClock(), storefrontIDs: catalog.storefrontIdentifiers, products: catalog.engineLookup)
        let store = try await SQLLedgerStore.sqlite(path: nil)
        try await store.migrate()
        let service = PurchaseService(
            store: store,
            apps: [
                AppConfiguration(
                    bundleID: "com.example.kakin", appAppleID: 6_450_000_001, environments: [.sandbox],
                    sandboxRoots: [authority.root], publicKey: "pk_test", secretKey: "sk_test")
            ],
            grants: try GrantsCatalog.load(from: Data(contentsOf: examples.appendingPathComponent("Kakin.grants.json")))
        )
        let server = KakinServerHTTP(service: service, signingKey: P256.Signing.PrivateKey())
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kakin-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let device = UUID().uuidString

        let sandboxApp = Application(
            router: SandboxService(engine: engine, catalog: catalog).router(),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        let serverApp = Application(
            router: server.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await sandboxApp.test(.live) { sandboxClient in
            try await serverApp.test(.live) { serverClient in
                func demo(_ script: String, crashAt point: String?) throws -> Int32 {
                    let process = Process()
                    process.executableURL = BinaryTests.binary
                    process.arguments = [
                        "demo", "--server", "http://127.0.0.1:\(serverClient.port!)",
                        "--sandbox", "http://127.0.0.1:\(sandboxClient.port!)", "--key", "pk_test", "--tester", "crash",
                        "--user", "crash-user", "--data", directory.path, "--device", device, "--script", "-",
                    ]
                    var environment = ProcessInfo.processInfo.environment
                    environment["KAKIN_CRASH_POINT"] = point
                    process.environment = environment
                    let input = Pipe()
                    process.standardInput = input
                    process.standardOutput = FileHandle.nullDevice
                    process.standardError = FileHandle.nullDevice
                    try process.run()
                    input.fileHandleForWriting.write(Data(script.utf8))
                    try input.fileHandleForWriting.close()
                    process.waitUntilExit()
                    return process.terminationStatus
                }
                for point in Self.crashPoints {
                    let killed = try demo("buy increasePoints\nquit\n", crashAt: point)
                    #expect(killed == SIGKILL, "the process was killed at \(point)")
                    #expect(try demo("status\nquit\n", crashAt: nil) == 0, "the next launch after \(point) runs")
                }
            }
        }
        let customer = try await service.customer(bundleID: "com.example.kakin", appUserID: "crash-user")
        #expect(customer.transactions.count == Self.crashPoints.count, "every purchase reached the server")
        #expect(customer.balances["points"] == Int64(100 * Self.crashPoints.count), "and was granted exactly once")
        #expect(customer.ledger.filter { $0.kind == .credit }.count == Self.crashPoints.count)
        #expect(await engine.unfinishedTransactions(of: "crash").isEmpty, "and finished at the store")
        try await store.shutdown()
    }
}
