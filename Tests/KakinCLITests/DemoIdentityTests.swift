import Foundation
import Testing

/// `kakin demo` without `--user`, against a real `kakin serve`: the app starts as an anonymous
/// customer, buys, logs in, and shows what it bought under the identified customer.
@Suite struct DemoIdentityTests {
    /// Runs the demo with `script` on this device's `data` folder; what it printed.
    static func demo(
        _ script: String, serve: ServeRevocationTests.Serve, data: String, scratch: borrowing ScratchDirectory
    )
        async throws -> String
    {
        let file = try scratch.write(script, to: "script-\(UUID().uuidString).txt")
        let app = try RunningProcess([
            "demo", "--server", serve.server, "--sandbox", serve.sandbox, "--key", serve.publishable, "--tester", "mio",
            "--data", data, "--device", "6f1c2b1e-8f0e-4a55-9b7e-0d2f4a1c9e10", "--script", file,
        ])
        let status = await app.exitStatus()
        #expect(status == 0, "\(app.errors)")
        return app.output
    }

    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func anAnonymousPurchaseFollowsTheLogIn() async throws {
        let scratch = try ScratchDirectory()
        let serve = try await ServeRevocationTests.Serve(data: scratch.path("data"), arguments: [])
        defer { _ = serve.process.stop() }
        let device = scratch.path("device")

        let bought = try await Self.demo(
            "whoami\nbuy removeAd\nbuy increasePoints\nstatus\nquit\n", serve: serve, data: device, scratch: scratch)
        let lines = bought.split(separator: "\n").map(String.init)
        let anonymous = try #require(lines.first { $0.hasPrefix("anonymous customer $kakin_anon_") }, "\(bought)")
        #expect(lines.last { $0.contains("points:") }?.hasPrefix("(no ads) points: 100") == true, "\(bought)")

        // The next launch is the same anonymous customer; logging in takes the purchases along.
        let loggedIn = try await Self.demo(
            "whoami\nlogin mio-account\nlogin mio-account\nwhoami\nlogout\nquit\n", serve: serve, data: device,
            scratch: scratch)
        let after = loggedIn.split(separator: "\n").map(String.init)
        #expect(after.first == anonymous, "\(loggedIn)")
        let logIns = after.filter { $0.hasPrefix("logged in as mio-account") }
        #expect(logIns.count == 2 && logIns.first == "logged in as mio-account (was \(anonymous))", "\(loggedIn)")
        let statuses = after.filter { $0.contains("points:") }
        #expect(statuses.count == 3, "\(loggedIn)")
        #expect(statuses.prefix(2).allSatisfy { $0.hasPrefix("(no ads) points: 100") }, "moved once: \(statuses)")
        #expect(after.contains("mio-account"))
        // Logging out: a new anonymous customer, with nothing.
        let loggedOut = try #require(after.first { $0.hasPrefix("logged out: anonymous customer $kakin_anon_") })
        #expect(!loggedOut.hasSuffix(anonymous.split(separator: " ").last.map(String.init) ?? anonymous))
        #expect(statuses.last?.hasPrefix("[ AD BANNER ] points: 0") == true, "\(statuses)")
    }
}
