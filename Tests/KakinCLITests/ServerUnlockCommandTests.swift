import Foundation
import KakinServer
import KakinLedger
import Testing

/// `kakin server lockouts` and `kakin server unlock`, run as an operator would, beside the ledger
/// the servers count failed sign-ins in.
@Suite struct ServerUnlockCommandTests {
    @Test(.enabled(if: BinaryTests.binary != nil, "the kakin binary is not built (swift build); skipped"))
    func anOperatorListsAndClearsWaits() async throws {
        let scratch = try ScratchDirectory()
        let config = try scratch.write(
            """
            {"database": "sqlite:ledger.sqlite", "serverKey": "key.pem",
             "keys": {"publishable": "pk_unlock", "secret": "sk_unlock_0123456789"},
             "apps": [{"bundleId": "com.example.kakin", "environments": ["Sandbox"]}]}
            """, to: "kakin.json")
        let configuration = try ServerConfiguration.load(contentsOf: URL(fileURLWithPath: config))
        var policy = SignInThrottlePolicy(sourceAttempts: 1, accountAttempts: 1)
        // Waits long enough to be listed however slowly the command starts.
        policy.firstWaitSeconds = 600
        try await configuration.withLedger { store in
            for _ in 0..<3 {
                _ = try await store.recordSignInFailure(.source("203.0.113.7"), policy: policy, now: Date())
                _ = try await store.recordSignInFailure(.dashboard, policy: policy, now: Date())
            }
        }
        let binary = BinaryTests()

        let listed = try binary.run(["server", "lockouts", "--config", config])
        #expect(listed.status == 0, "\(listed.error)")
        let lines = listed.output.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("source:203.0.113.7 failures=3 waits-until=") }, "\(listed.output)")
        #expect(lines.contains { $0.hasPrefix("account:dashboard failures=3 waits-until=") }, "\(listed.output)")

        let unlocked = try binary.run(["server", "unlock", "--config", config, "--source", "203.0.113.7"])
        #expect(unlocked.status == 0, "\(unlocked.error)")
        #expect(unlocked.output == "cleared 1 subject (source:203.0.113.7)\n")
        let after = try await configuration.withLedger { try await $0.signInFailures().map(\.subject) }
        #expect(after == [.dashboard])

        #expect(try binary.run(["server", "unlock", "--config", config, "--all"]).output == "cleared 1 subject\n")
        #expect(try binary.run(["server", "lockouts", "--config", config]).output == "no failed sign-ins are counted\n")

        // Exactly one of --source, --account and --all.
        let ambiguous = try binary.run(["server", "unlock", "--config", config])
        #expect(ambiguous.status != 0)
        #expect(ambiguous.error.contains("exactly one of --source, --account and --all"))
    }
}
