import Foundation
import KakinLedger
import KakinTestSupport
import Testing

/// The contract of ``SessionLedger``, run against every engine and the in-memory implementation.
@Suite("Ledger role: dashboard sessions and sign-in throttles")
struct SessionLedgerContractTests {
    static let policy = SignInThrottlePolicy(sourceAttempts: 2, firstWaitSeconds: 10, maxWaitSeconds: 60, windowSeconds: 300)

    @Test("a token is stored once by its digest, read while live and of its kind, and forgotten", arguments: RoleImplementation.all)
    func tokens(_ implementation: RoleImplementation) async throws {
        try await implementation.withSessions { store in
            let now = Date(timeIntervalSince1970: 1_790_000_000)
            let session = Data(repeating: 1, count: 32)
            let form = Data(repeating: 2, count: 32)
            let scope = DashboardScope.apps([Fixture.bundleID])
            #expect(
                try await store.insertDashboardToken(
                    digest: session, kind: .session, csrf: "csrf", scope: scope, expires: now + 60, now: now))
            #expect(
                try await !store.insertDashboardToken(
                    digest: session, kind: .session, csrf: "other", scope: nil, expires: now + 90, now: now),
                "a digest is stored once")
            #expect(
                try await store.insertDashboardToken(
                    digest: form, kind: .usedSignInForm, csrf: nil, scope: nil, expires: now + 30, now: now))

            let found = try #require(try await store.dashboardToken(digest: session, kind: .session, now: now + 1))
            #expect(found.csrf == "csrf")
            #expect(found.scope == scope)
            #expect(found.expires == now + 60)
            #expect(try await store.dashboardToken(digest: session, kind: .usedSignInForm, now: now) == nil)
            #expect(try await store.dashboardToken(digest: form, kind: .usedSignInForm, now: now)?.scope == nil)
            #expect(try await store.dashboardToken(digest: session, kind: .session, now: now + 60) == nil, "expired")

            // An expired token is forgotten when another is stored: its digest may be stored again.
            #expect(
                try await store.insertDashboardToken(
                    digest: form, kind: .usedSignInForm, csrf: nil, scope: nil, expires: now + 200, now: now + 100))
            try await store.deleteDashboardToken(digest: form)
            #expect(try await store.dashboardToken(digest: form, kind: .usedSignInForm, now: now + 101) == nil)
        }
    }

    @Test("failures are counted, waits grow, and quiet subjects are forgotten", arguments: RoleImplementation.all)
    func failuresAreCountedWaitsGrowAndQuietSubjectsAreForgotten(_ implementation: RoleImplementation) async throws {
        try await implementation.withSessions { store in
            let start = Date(timeIntervalSince1970: 1_790_000_000)
            let source = SignInSubject.source("203.0.113.7")
            var counts: [SignInFailureCount] = []
            for second in 0..<4 {
                counts.append(
                    try await store.recordSignInFailure(source, policy: Self.policy, now: start + Double(second)))
            }
            #expect(counts.map(\.failures) == [1, 2, 3, 4])
            // The third failure waits 10 s, the fourth 20 s.
            #expect(counts[1].lockedUntil <= start + 1)
            #expect(counts[2].lockedUntil == start + 2 + 10)
            #expect(counts[3].lockedUntil == start + 3 + 20)
            #expect(try await store.signInLockedUntil([source, .dashboard], now: start + 4) == start + 23)
            #expect(try await store.signInLockedUntil([source], now: start + 23) == nil)
            #expect(try await store.signInLockedUntil([.source("198.51.100.1")], now: start + 4) == nil)

            // Quiet for the window after the wait ended: counting starts again.
            let later = start + 23 + 301
            #expect(try await store.recordSignInFailure(source, policy: Self.policy, now: later).failures == 1)
            // Not quiet long enough: the count goes on.
            _ = try await store.recordSignInFailure(.dashboard, policy: Self.policy, now: later)
            #expect(try await store.recordSignInFailure(.dashboard, policy: Self.policy, now: later + 299).failures == 2)

            #expect(Set(try await store.signInFailures().map(\.subject)) == [source, .dashboard])
            #expect(try await store.clearSignInFailures(source) == 1)
            #expect(try await store.signInFailures().map(\.subject) == [.dashboard])
            #expect(try await store.clearSignInFailures(nil) == 1)
            #expect(try await store.signInFailures().isEmpty)
        }
    }
}
