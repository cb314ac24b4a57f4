#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import AppStoreSecurity
import AppStoreTesting
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import KakinServer
import KakinLedger
import AppStoreModels
import KakinTestSupport
import StoreSandbox
import Testing

/// Real `kakin demo` processes are killed with SIGKILL at every point of the purchase path; the
/// next run of the app delivers what was left, and the server grants each purchase exactly once.
@Suite struct CrashRecoveryTests {
    static let crashPoints = ["afterPurchase", "afterEnqueue", "beforeDelivery", "afterDelivery", "afterFinish"]

    /// A sandbox and a purchase server on loopback, and a way to run the demo app against them.
    struct Stack {
        let engine: SandboxEngine
        let service: PurchaseService
        let store: any LedgerStore
        let server: KakinServerHTTP
        let sandbox: SandboxService

        init() async throws {
            let examples = ExampleApp.catalogDirectory
            let authority = try SandboxCertificateAuthority.generate()
            let catalog = try ExampleApp.catalog()
            engine = try ExampleSandbox.engine(catalog: catalog, authority: authority, clock: SandboxClock())
            store = try SQLiteLedger(path: nil)
            try await store.migrate()
            service = PurchaseService.example(store: store, root: authority.root, grants: try ExampleApp.grants())
            let configuration = try JSONDecoder().decode(
                StoreKitConfiguration.self, from: Data(contentsOf: examples.appendingPathComponent("Kakin.storekit")))
            server = KakinServerHTTP(
                service: service, signingKey: P256.Signing.PrivateKey(), catalog: configuration)
            sandbox = SandboxService(engine: engine, catalog: catalog)
        }

        /// Runs `body` with both services listening; `demo` runs one app process to its end.
        func run(_ body: @escaping @Sendable (_ demo: Demo) async throws -> Void) async throws {
            try await withLiveSandboxAndServer(sandbox: sandbox, server: server) { sandboxPort, serverPort in
                try await body(Demo(sandboxPort: sandboxPort, serverPort: serverPort))
            }
        }
    }

    /// One launch of `kakin demo` as a separate process.
    struct Demo: Sendable {
        let sandboxPort: Int
        let serverPort: Int

        /// Runs the demo app with `script` on standard input, for `user` on `tester`, keeping its
        /// state in `directory` as device `device`; killed at `point` when one is given.
        func run(
            _ script: String, user: String, tester: String, directory: URL, device: String, crashAt point: String?
        ) async throws -> Int32 {
            try await runCapturing(
                script, user: user, tester: tester, directory: directory, device: device, crashAt: point,
                capture: false
            ).status
        }

        /// Like ``run(_:user:tester:directory:device:crashAt:)``, and returns what the app printed.
        func runCapturing(
            _ script: String, user: String, tester: String, directory: URL, device: String, crashAt point: String?,
            storefront: String = "USA", capture: Bool = true
        ) async throws -> (status: Int32, output: String) {
            let process = Process()
            process.executableURL = BinaryTests.binary
            process.arguments = [
                "demo", "--server", "http://127.0.0.1:\(serverPort)", "--sandbox", "http://127.0.0.1:\(sandboxPort)",
                "--key", "pk_test", "--tester", tester, "--user", user, "--data", directory.path, "--device", device,
                "--storefront", storefront, "--script", "-",
            ]
            var environment = ProcessInfo.processInfo.environment
            environment["KAKIN_CRASH_POINT"] = point
            process.environment = environment
            let input = Pipe()
            process.standardInput = input
            let output = Pipe()
            process.standardOutput = capture ? output : FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let exited = AsyncStream<Int32>.makeStream()
            process.terminationHandler = { exited.continuation.yield($0.terminationStatus) }
            try process.run()
            input.fileHandleForWriting.write(Data(script.utf8))
            try input.fileHandleForWriting.close()
            // Read on a thread of its own: a blocking read must not hold one of the few threads
            // that run the tests' tasks.
            let printed: Data =
                capture
                ? await withCheckedContinuation { continuation in
                    let reader = output.fileHandleForReading
                    Thread.detachNewThread { continuation.resume(returning: reader.readDataToEndOfFile()) }
                } : Data()
            for await status in exited.stream { return (status, String(decoding: printed, as: UTF8.self)) }
            return (-1, "")
        }
    }

    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func killingTheAppAnywhereLosesNothingAndGrantsOnce() async throws {
        let stack = try await Stack()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kakin-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let device = UUID().uuidString
        try await stack.run { demo in
            for point in Self.crashPoints {
                let killed = try await demo.run(
                    "buy increasePoints\nquit\n", user: "crash-user", tester: "crash", directory: directory,
                    device: device, crashAt: point)
                #expect(killed == SIGKILL, "the process was killed at \(point)")
                let next = try await demo.run(
                    "status\nquit\n", user: "crash-user", tester: "crash", directory: directory, device: device,
                    crashAt: nil)
                #expect(next == 0, "the next launch after \(point) runs")
            }
        }
        let customer = try await stack.service.customer(bundleID: ExampleApp.bundleID, appUserID: "crash-user")
        #expect(customer.transactions.count == Self.crashPoints.count, "every purchase reached the server")
        #expect(customer.balances["points"] == Int64(100 * Self.crashPoints.count), "and was granted exactly once")
        #expect(customer.ledger.filter { $0.kind == .credit }.count == Self.crashPoints.count)
        #expect(await stack.engine.unfinishedTransactions(of: "crash").isEmpty, "and finished at the store")
        try await stack.store.shutdown()
    }

    /// Several users of one device (one store account, one storage directory, one outbox) buy at
    /// the same time in separate processes, and every process is killed at the same point: nothing
    /// is lost to the other writers, and the next launches deliver every purchase once, each for
    /// the user who bought it.
    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func severalUsersOnOneDeviceKilledTogetherLoseNothing() async throws {
        let stack = try await Stack()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kakin-crash-users-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let users = ["alice", "bob", "chika"]
        let points = ["afterPurchase", "afterEnqueue", "beforeDelivery", "afterDelivery"]
        let device = UUID().uuidString
        try await stack.run { demo in
            for point in points {
                let statuses = try await withThrowingTaskGroup(of: Int32.self) { group in
                    for user in users {
                        group.addTask {
                            try await demo.run(
                                "buy increasePoints\nquit\n", user: user, tester: "family",
                                directory: directory, device: device, crashAt: point)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses == [SIGKILL, SIGKILL, SIGKILL], "every process was killed at \(point)")
            }
            // Each user opens the app again, one after another.
            for user in users {
                let next = try await demo.run(
                    "status\nquit\n", user: user, tester: "family", directory: directory, device: device,
                    crashAt: nil)
                #expect(next == 0)
            }
        }
        // A process may die before it buys (a crash point is also reached while it delivers what
        // the others queued), so count what the store sold: each sale reaches the server once, for
        // the user whose account token it carries.
        let sold = await stack.engine.transactions(of: "family")
        let outbox = try Data(contentsOf: directory.appendingPathComponent("outbox.json"))
        let accounts = try #require(
            (try JSONSerialization.jsonObject(with: outbox) as? [String: Any])?["accounts"] as? [String: String])
        #expect(sold.count >= users.count)
        for user in users {
            let bought = sold.filter { accounts[$0.appAccountToken ?? ""] == user }
            let customer = try await stack.service.customer(bundleID: ExampleApp.bundleID, appUserID: user)
            #expect(
                Set(customer.transactions.map(\.transactionID)) == Set(bought.map(\.id)),
                "\(user): every purchase reached the server, for this user")
            #expect(customer.balances["points"] == Int64(100 * bought.count), "\(user): granted exactly once each")
        }
        #expect(sold.allSatisfy { accounts[$0.appAccountToken ?? ""] != nil }, "every sale has its user")
        #expect(await stack.engine.unfinishedTransactions(of: "family").isEmpty, "all finished at the store")
        try await stack.store.shutdown()
    }
}
