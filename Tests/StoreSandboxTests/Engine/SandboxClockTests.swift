import Foundation
import StoreSandbox
import Testing

@Suite struct SandboxClockTests {
    /// A real clock the test moves by hand.
    final class FakeRealTime: @unchecked Sendable {
        let lock = NSLock()
        var value = Date(timeIntervalSince1970: 1_000_000)
        func now() -> Date { lock.withLock { value } }
        func pass(_ seconds: TimeInterval) { lock.withLock { value = value.addingTimeInterval(seconds) } }
    }

    @Test func manualClockMovesOnlyWhenAdvanced() {
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let clock = SandboxClock.manual(at: start)
        #expect(clock.now() == start)
        clock.advance(by: 86_400)
        #expect(clock.now() == start.addingTimeInterval(86_400))
        clock.advance(by: -100)
        #expect(clock.now() == start.addingTimeInterval(86_400))
        clock.set(start)
        #expect(clock.now() == start.addingTimeInterval(86_400), "time never runs backwards")
    }

    @Test func acceleratedClockFollowsTheRate() {
        let real = FakeRealTime()
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        // One month (30 days) every 30 real seconds.
        let clock = SandboxClock(mode: .running(rate: 86_400), start: start, realNow: { real.now() })
        real.pass(30)
        #expect(clock.now() == start.addingTimeInterval(30 * 86_400))
        clock.setMode(.running(rate: 1))
        real.pass(10)
        #expect(clock.now() == start.addingTimeInterval(30 * 86_400 + 10))
        clock.advance(by: 5)
        #expect(clock.now() == start.addingTimeInterval(30 * 86_400 + 15))
        clock.setMode(.manual)
        real.pass(1_000)
        #expect(clock.now() == start.addingTimeInterval(30 * 86_400 + 15))
    }
}
