import Foundation
import KakinLedger
import KakinServer
import KakinTestSupport
import Testing

/// The sign-in throttle's decisions over an in-memory ``SessionLedger``: no database needed.
@Suite("Sign-in throttle over an in-memory session ledger")
struct SignInThrottleUnitTests {
    static let policy = SignInThrottlePolicy(sourceAttempts: 2, accountAttempts: 2, firstWaitSeconds: 10, maxWaitSeconds: 60)

    @Test("an account under attack makes a new address wait from its first failure; a right key clears it")
    func accountUnderAttack() async throws {
        let ledger = InMemorySessionLedger()
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let throttle = SignInThrottle(ledger: ledger, policy: Self.policy, now: { start })
        let first = SignInSubject.source("203.0.113.7")
        let second = SignInSubject.source("198.51.100.9")

        #expect(await throttle.failed([first, .dashboard], kind: .dashboard) == nil)
        #expect(await throttle.failed([first, .dashboard], kind: .dashboard) == nil, "two free attempts")
        #expect(try await throttle.lockedUntil([second]) == nil)
        // The account's third failure: it is under attack, so the addresses get no free attempts:
        // the first address's third failure waits 40 s (10 s doubled twice), and another
        // address waits from its first failure.
        #expect(await throttle.failed([first, .dashboard], kind: .dashboard) == start + 40)
        let waits = try #require(await throttle.failed([second, .dashboard], kind: .dashboard))
        #expect(waits == start + 10)
        #expect(try await throttle.lockedUntil([second]) == waits)
        #expect(throttle.learnedLockedUntil([second]) == waits)

        await throttle.succeeded(source: second)
        #expect(try await throttle.lockedUntil([second]) == nil)
        #expect(try await ledger.signInFailures().map(\.subject).contains(second) == false)
    }
}
