import AppStoreSecurity
import Crypto
import Foundation
import KakinCLI
import KakinServer
import KakinTestSupport
import Testing

/// `kakin server` as an operator runs it: a real process, configured by a file, in front of a
/// separately started `kakin sandbox` that stands in for Apple.
@Suite(.serialized) struct ServerCommandTests {
    static let examples = ExampleApp.catalogDirectory
    static let bundleID = ExampleApp.bundleID
    static let secret = "sk_test_0123456789abcdef"
    static let publishable = "pk_test_0123456789"

    /// A sandbox App Store on its own, with an API key for the server, notifying `notificationPort`.
    struct Sandbox {
        let process: RunningProcess
        let url: String
        let root: String
        let apiKeyPath: String

        init(in scratch: borrowing ScratchDirectory, notificationPort: Int) async throws {
            let key = P256.Signing.PrivateKey()
            apiKeyPath = try scratch.write(key.pemRepresentation + "\n", to: "api.p8")
            let data = scratch.path("sandbox")
            process = try RunningProcess([
                "sandbox", "--data", data, "--port", "0", "--catalog",
                ServerCommandTests.examples.appendingPathComponent("Kakin.storekit").path,
                "--api-key", "KEY1234567:issuer-1:\(apiKeyPath)", "--shared-secret", "shared",
                "--notification-url", "http://127.0.0.1:\(notificationPort)/v1/notifications/apple",
            ])
            let output = try await process.waitForOutput(containing: "verifyReceipt:")
            let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("Kakin sandbox App Store on ") })
            url = String(line.dropFirst("Kakin sandbox App Store on ".count))
            root = data + "/ca/root.pem"
        }
    }

    static func configuration(
        port: Int, sandbox: Sandbox, scratch: borrowing ScratchDirectory, name: String, trustSandbox: Bool = true,
        overriding extra: [String: Any] = [:]
    ) throws -> String {
        var object: [String: Any] = [
            "listen": ["host": "127.0.0.1", "port": port],
            "database": "sqlite:\(name).sqlite",
            "serverKey": "\(name)-key.pem",
            "keys": ["publishable": publishable, "secret": "env:TEST_KAKIN_SECRET"],
            "logging": ["format": "json"],
            "apps": [
                [
                    "bundleId": bundleID, "appAppleId": ExampleApp.appAppleID, "environments": ["Sandbox"],
                    "sharedSecret": "shared",
                    "appStoreServerAPI": [
                        "keyId": "KEY1234567", "issuerId": "issuer-1", "privateKey": sandbox.apiKeyPath,
                    ],
                    "catalog": examples.appendingPathComponent("Kakin.storekit").path,
                    "grants": examples.appendingPathComponent("Kakin.grants.json").path,
                    "extraRoots": trustSandbox ? [sandbox.root] : [],
                    "endpoints": [
                        "verifyReceiptProduction": "\(sandbox.url)/production/verifyReceipt",
                        "verifyReceiptSandbox": "\(sandbox.url)/verifyReceipt",
                        "serverAPIProduction": sandbox.url, "serverAPISandbox": sandbox.url,
                    ],
                ]
            ],
        ]
        object.merge(extra) { _, new in new }
        return try scratch.write(
            String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self), to: "\(name).json")
    }

    static func startServer(_ config: String, arguments: [String] = []) async throws -> (RunningProcess, String) {
        let server = try RunningProcess(
            ["server", "--config", config] + arguments, environment: ["TEST_KAKIN_SECRET": secret])
        let output = try await server.waitForOutput(containing: "metrics:")
        let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("Kakin purchase server on ") })
        return (server, String(line.dropFirst("Kakin purchase server on ".count)))
    }

    /// A signed transaction bought from the sandbox.
    static func buy(_ product: String, tester: String, sandbox: Sandbox) async throws -> (id: String, jws: String) {
        _ = try await exchange("POST", "\(sandbox.url)/v1/control/testers", json: ["name": tester, "id": tester])
        let payment = try await exchange(
            "POST", "\(sandbox.url)/v1/device/payments",
            json: ["testerID": tester, "productID": "com.example.kakin.\(product)"])
        let transaction = try #require(payment.body["transaction"] as? [String: Any])
        let jws = try #require(transaction["jwsRepresentation"] as? String)
        let id = try #require((transaction["transaction"] as? [String: Any])?["transactionId"] as? String)
        return (id, jws)
    }

    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func threadsSetsTheEventLoopThreads() async throws {
        let scratch = try ScratchDirectory()
        let sandbox = try await Sandbox(in: scratch, notificationPort: try freePort())
        defer { _ = sandbox.process.stop() }
        for threads in [1, 3] {
            let (server, _) = try await Self.startServer(
                try Self.configuration(port: 0, sandbox: sandbox, scratch: scratch, name: "threads\(threads)"),
                arguments: ["--threads", "\(threads)"])
            defer { _ = server.stop() }
            let tasks = "/proc/\(server.process.processIdentifier)/task"
            // A thread that ends between the listing and the read (a short-lived worker) is passed
            // over: the event loops' threads live as long as the server.
            let names = try FileManager.default.contentsOfDirectory(atPath: tasks).compactMap { task in
                try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8)
            }
            // NIO names the threads of its shared event loop group NIO-SGLTN-<group>-#<n>.
            #expect(names.filter { $0.contains(/^NIO-SGLTN-[0-9]+-#/) }.count == threads, "\(names)")
        }
    }

    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func aServerInFrontOfASeparateSandboxRecordsRefundsAndReconciles() async throws {
        let scratch = try ScratchDirectory()
        let port = try freePort()
        let sandbox = try await Sandbox(in: scratch, notificationPort: port)
        defer { _ = sandbox.process.stop() }
        let (server, url) = try await Self.startServer(
            try Self.configuration(port: port, sandbox: sandbox, scratch: scratch, name: "trusting"))
        let appKey = ["X-Kakin-Key": Self.publishable]

        // A sandbox purchase posted by the app is verified under the extra root and recorded.
        let (id, jws) = try await Self.buy("removeAd", tester: "alice", sandbox: sandbox)
        let posted = try await exchange(
            "POST", "\(url)/v1/transactions", headers: appKey,
            json: ["bundleId": Self.bundleID, "appUserId": "alice", "signedTransaction": jws])
        #expect(posted.status == 200)
        let entitlement = ((posted.body["customer"] as? [String: Any])?["entitlements"] as? [[String: Any]])?.first
        #expect(entitlement?["identifier"] as? String == "removeAds" && entitlement?["isActive"] as? Bool == true)

        // The refund reaches the server as a notification from the sandbox.
        let refund = try await exchange("POST", "\(sandbox.url)/v1/control/transactions/\(id)/refund", json: [:])
        #expect(refund.status == 200)
        var active = true
        let deadline = ContinuousClock.now + .seconds(30)
        while active, ContinuousClock.now < deadline {
            let customer = try await exchange(
                "GET", "\(url)/v1/customers/alice?bundleId=\(Self.bundleID)", headers: appKey)
            active =
                ((customer.body["customer"] as? [String: Any])?["entitlements"] as? [[String: Any]])?.first?["isActive"]
                as? Bool ?? true
            if active { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(!active, "the REFUND notification revoked the entitlement")

        // Reconciliation signs its App Store Server API calls with the configured key.
        // It runs in the background: the answer is the run, followed until it ends.
        let reconcile = try await exchange(
            "POST", "\(url)/v1/admin/reconcile?bundleId=\(Self.bundleID)",
            headers: ["Authorization": "Bearer \(Self.secret)"])
        #expect(reconcile.status == 202)
        let runID = try #require(reconcile.body["id"] as? Int)
        var run = reconcile.body
        let runDeadline = ContinuousClock.now + .seconds(30)
        while run["state"] as? String == "running", ContinuousClock.now < runDeadline {
            try await Task.sleep(for: .milliseconds(100))
            run = try await exchange(
                "GET", "\(url)/v1/admin/reconcile/runs/\(runID)", headers: ["Authorization": "Bearer \(Self.secret)"]
            ).body
        }
        #expect(run["state"] as? String == "completed", "\(run)")
        #expect((run["notificationsRead"] as? Int ?? 0) >= 1, "the refund's notification at least")

        let metrics = try await exchange("GET", "\(url)/metrics")
        #expect(
            String(decoding: metrics.raw, as: UTF8.self).contains(
                "kakin_ledger_events_total{type=\"transaction.revoked\"} 1"))
        #expect(try await exchange("GET", "\(url)/ready").status == 200)

        // SIGTERM drains and exits 0; the log was one JSON object per line, one per request.
        #expect(await server.stop() == 0)
        let requests = server.output.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }.filter { $0["message"] as? String == "request" }
        #expect(requests.contains { $0["route"] as? String == "/v1/transactions" && $0["status"] as? String == "200" })
        #expect(requests.allSatisfy { $0["request_id"] != nil && $0["latency_ms"] != nil })
        #expect(server.output.contains("\"event\":\"transaction.recorded\""), "ledger events are logged")
    }

    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func importBringsAnAppsPurchasesInAndGoesOnFromWhereItStopped() async throws {
        let scratch = try ScratchDirectory()
        let sandbox = try await Sandbox(in: scratch, notificationPort: try freePort())
        defer { _ = sandbox.process.stop() }
        let first = try await Self.buy("removeAd", tester: "carol", sandbox: sandbox).id
        let second = try await Self.buy("increasePoints", tester: "dave", sandbox: sandbox).id
        let config = try Self.configuration(
            port: try freePort(), sandbox: sandbox, scratch: scratch, name: "importing",
            overriding: ["keys": ["publishable": Self.publishable, "secret": Self.secret]])
        let ids = try scratch.write("# exported\n\(first)\n\n\(second)\n", to: "ids.txt")
        let binary = BinaryTests()

        let imported = try binary.run(["server", "import", "--config", config, "--transactions", ids])
        #expect(imported.status == 0, "\(imported.error)")
        #expect(imported.output.contains("imported 2 IDs: 2 transactions seen, 2 new, 0 revoked"), "\(imported.output)")
        #expect(try String(contentsOfFile: ids + ".progress", encoding: .utf8) == "2\n")
        let ledger = try await ServerConfiguration.load(contentsOf: URL(fileURLWithPath: config)).withLedger { store in
            (try await store.transaction(id: first), try await store.transaction(id: second))
        }
        #expect(ledger.0 != nil && ledger.1 != nil)

        // Started again, it goes on after what its progress file counts: nothing is left.
        let again = try binary.run(["server", "import", "--config", config, "--transactions", ids])
        #expect(again.output.contains("going on after the 2 IDs"), "\(again.output)")
        #expect(again.output.contains("imported 0 IDs"), "\(again.output)")
    }

    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func withoutTheExtraRootSandboxDataIsRefusedAndABusyPortStopsTheStart() async throws {
        let scratch = try ScratchDirectory()
        let sandbox = try await Sandbox(in: scratch, notificationPort: try freePort())
        defer { _ = sandbox.process.stop() }
        let (server, url) = try await Self.startServer(
            try Self.configuration(port: 0, sandbox: sandbox, scratch: scratch, name: "strict", trustSandbox: false))
        let (_, jws) = try await Self.buy("removeAd", tester: "bob", sandbox: sandbox)
        let posted = try await exchange(
            "POST", "\(url)/v1/transactions", headers: ["X-Kakin-Key": Self.publishable],
            json: ["bundleId": Self.bundleID, "appUserId": "bob", "signedTransaction": jws])
        #expect(posted.status == 422)
        #expect((posted.body["error"] as? [String: Any])?["cause"] as? String == "untrustedChain")
        #expect(await server.stop() == 0)

        // The sandbox's port is taken: one line, a non-zero exit, no backtrace.
        let busyPort = try #require(Int(sandbox.url.split(separator: ":").last ?? ""))
        let busy = try RunningProcess(
            [
                "server", "--config",
                try Self.configuration(port: busyPort, sandbox: sandbox, scratch: scratch, name: "busy"),
            ],
            environment: ["TEST_KAKIN_SECRET": Self.secret])
        #expect(await busy.exitStatus() != 0)
        let lines = busy.errors.split(separator: "\n").filter { !$0.contains("\"level\"") }
        #expect(lines.count == 1 && lines.first?.contains("already in use") == true, "\(busy.errors)")
        #expect(!busy.errors.contains("Fatal error") && !busy.errors.contains("Stack dump"))
    }

    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func aServerStartedWithALowOpenFileLimitRaisesItAndReportsItsDescriptors() async throws {
        let hard = try #require(Self.hardOpenFileLimit)
        try #require(hard > 256, "the hard open-file limit is too low for this test")
        let scratch = try ScratchDirectory()
        let sandbox = try await Sandbox(in: scratch, notificationPort: try freePort())
        defer { _ = sandbox.process.stop() }
        let config = try Self.configuration(
            port: 0, sandbox: sandbox, scratch: scratch, name: "limits",
            overriding: ["logging": ["format": "json", "level": "info"]])
        let server = try RunningProcess(
            ["server", "--config", config], environment: ["TEST_KAKIN_SECRET": Self.secret], prelude: "ulimit -Sn 256")
        defer { _ = server.stop() }
        let output = try await server.waitForOutput(containing: "metrics:")
        let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("Kakin purchase server on ") })
        let url = String(line.dropFirst("Kakin purchase server on ".count))
        let metrics = String(decoding: try await exchange("GET", "\(url)/metrics").raw, as: UTF8.self)
        func value(_ name: String) -> Double? {
            metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
        }
        #expect(value("kakin_process_max_fds") == Double(hard), "started with 256, raised to the hard limit")
        #expect((value("kakin_process_open_fds") ?? 0) > 3)
        #expect(server.output.contains("raised the open-file limit") || server.errors.contains("raised the open-file limit"))
    }

    /// This process's hard limit on open files, which a child inherits.
    static var hardOpenFileLimit: UInt64? {
        var limit = rlimit()
        #if canImport(Glibc)
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        #else
        guard getrlimit(RLIMIT_NOFILE, &limit) == 0 else { return nil }
        #endif
        return UInt64(limit.rlim_max)
    }

    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func aBadConfigurationStopsTheStartWithOneLineNamingTheKey() throws {
        let scratch = try ScratchDirectory()
        let config = try scratch.write(
            #"{"database": "sqlite:x.sqlite", "serverKey": "k.pem", "keys": {"publishable": "pk", "secret": "sk_0123456789abcdef"}, "apps": [{"bundleId": "a", "environments": ["Sandbox"], "extraRoots": ["missing.pem"]}]}"#,
            to: "bad.json")
        let process = try RunningProcess(["server", "--config", config])
        #expect(process.exitStatus() == 1)
        #expect(process.errors.trimmingCharacters(in: .newlines).split(separator: "\n").count == 1)
        #expect(process.errors.hasPrefix("error: apps[0].extraRoots[0]: "), "\(process.errors)")
        let typo = try scratch.write(#"{"databse": "sqlite:x"}"#, to: "typo.json")
        let second = try RunningProcess(["server", "--config", typo])
        #expect(second.exitStatus() == 1)
        #expect(second.errors.contains("databse: unknown key") || second.errors.contains("database: is required"))
    }

    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func serveStartsBothServersFromTheSameBuilderAndStopsCleanly() async throws {
        let scratch = try ScratchDirectory()
        let (port, sandboxPort) = (try freePort(), try freePort())
        let arguments = [
            "serve", "--data", scratch.path("data"), "--port", "\(port)", "--sandbox-port", "\(sandboxPort)",
            "--catalog", Self.examples.appendingPathComponent("Kakin.storekit").path,
            "--grants", Self.examples.appendingPathComponent("Kakin.grants.json").path,
        ]
        let serve = try RunningProcess(arguments)
        let banner = try await serve.waitForOutput(containing: "sandbox root CA:")
        // The banner is printed once both ports answer.
        #expect(try await exchange("GET", "http://127.0.0.1:\(port)/ready").status == 200)
        #expect(try await exchange("GET", "http://127.0.0.1:\(sandboxPort)/v1/control/settings").status == 200)
        let secret = try #require(
            banner.split(separator: "\n").first { $0.contains("secret key:") }?.split(separator: " ").last)
        let token = try await kakin("token", "--data", scratch.path("data"))
        #expect(token.exitCode == 0, "the token command reads the key kakin serve made")
        let history = try await exchange(
            "GET", "http://127.0.0.1:\(sandboxPort)/inApps/v2/history/0",
            headers: ["Authorization": "Bearer \(token.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))"]
        )
        #expect(history.status != 401, "the sandbox accepts the token")
        let reconcile = try await exchange(
            "POST", "http://127.0.0.1:\(port)/v1/admin/reconcile?bundleId=\(Self.bundleID)",
            headers: ["Authorization": "Bearer \(secret)"])
        #expect(reconcile.status == 202)
        #expect(reconcile.body["state"] as? String == "running")

        // A second serve on the same ports: one line, a non-zero exit.
        let second = try RunningProcess(arguments)
        #expect(await second.exitStatus() != 0)
        #expect(second.errors.contains("already in use"), "\(second.errors)")
        #expect(!second.errors.contains("Fatal error"))
        #expect(await serve.stop() == 0, "SIGTERM drains and exits 0")
    }

    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func sigtermLetsARequestInFlightFinish() async throws {
        let scratch = try ScratchDirectory()
        let sandbox = try await Sandbox(in: scratch, notificationPort: try freePort())
        defer { _ = sandbox.process.stop() }
        let (server, url) = try await Self.startServer(
            try Self.configuration(port: 0, sandbox: sandbox, scratch: scratch, name: "draining"))
        let port = try #require(Int(url.split(separator: ":").last ?? ""))
        let body = #"{"signedPayload": "not.a.notification"}"#
        let connection = try RawConnection(port: port)
        // Half a notification is in flight when SIGTERM arrives; the rest follows.
        try connection.send(
            "POST /v1/notifications/apple HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + String(body.prefix(10)))
        _ = try await exchange("GET", "\(url)/health")
        kill(server.process.processIdentifier, SIGTERM)
        // Once the server refuses new connections, it is shutting down.
        let deadline = ContinuousClock.now + .seconds(10)
        var refusing = false
        while !refusing, ContinuousClock.now < deadline {
            refusing = (try? RawConnection(port: port)) == nil
            if !refusing { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(refusing)
        try connection.send(String(body.dropFirst(10)))
        let answer = connection.receiveAll()
        #expect(answer.hasPrefix("HTTP/1.1 422"), "the request in flight is answered: \(answer)")
        #expect(await server.exitStatus() == 0)
    }

    @Test func tokenPrintsABearerTokenForTheConfiguredKey() async throws {
        let scratch = try ScratchDirectory()
        let key = P256.Signing.PrivateKey()
        let path = try scratch.write(key.pemRepresentation, to: "key.p8")
        let output = try await kakin(
            "token", "--key-id", "KEY1", "--issuer-id", "issuer", "--key", path, "--bundle-id", "com.x")
        #expect(output.exitCode == 0)
        let verifier = AppStoreServerAPITokenVerifier(
            keys: [.init(keyID: "KEY1", issuerID: "issuer", publicKey: key.publicKey)])
        let claims = try verifier.verify(output.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(claims.bundleID == "com.x")
        let missing = try await kakin("token", "--data", scratch.path("nowhere"))
        #expect(missing.exitCode == 1)
    }
}
