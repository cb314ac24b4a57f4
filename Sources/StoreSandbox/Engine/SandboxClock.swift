import Foundation

/// The sandbox's sense of time: injected, so that every scenario is deterministic.
///
/// Three ways to run it, combinable:
/// - real time (the default);
/// - accelerated, like Xcode's StoreKit testing time rates: `rate` sandbox seconds pass for every
///   real second (a monthly subscription renews every 30 seconds at a rate of 86 400);
/// - advanced explicitly, by the control API or a test: ``advance(by:)`` moves it forward at once.
///
/// Tests use ``manual(at:)``, which never moves by itself: nothing sleeps.
public final class SandboxClock: @unchecked Sendable {
    /// How the clock runs.
    public enum Mode: Sendable, Equatable {
        /// Real time scaled by `rate` (1 = real time), from the moment the mode was set.
        case running(rate: Double)
        /// Stopped: only ``advance(by:)`` and ``set(_:)`` move it.
        case manual
    }

    private let lock = NSLock()
    private let realNow: @Sendable () -> Date
    private var mode: Mode
    /// The sandbox time when the mode was last set or the clock last moved.
    private var anchor: Date
    /// The real time at that moment.
    private var realAnchor: Date

    /// Creates a clock.
    ///
    /// - Parameters:
    ///   - mode: how it runs.
    ///   - start: the sandbox time now; the real time by default.
    ///   - realNow: the real clock; injected for tests of the running mode.
    public init(
        mode: Mode = .running(rate: 1), start: Date? = nil, realNow: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.realNow = realNow
        self.mode = mode
        let real = realNow()
        realAnchor = real
        anchor = start ?? real
    }

    /// A stopped clock at `date`, for tests.
    public static func manual(at date: Date) -> SandboxClock {
        SandboxClock(mode: .manual, start: date)
    }

    /// The current sandbox time.
    public func now() -> Date {
        lock.withLock { currentLocked() }
    }

    /// The current mode.
    public var currentMode: Mode { lock.withLock { mode } }

    /// Changes how the clock runs from now on, without a jump.
    public func setMode(_ newMode: Mode) {
        lock.withLock {
            rebaseLocked()
            mode = newMode
        }
    }

    /// Moves the sandbox time forward. Negative intervals are ignored: time never runs backwards.
    @discardableResult
    public func advance(by interval: TimeInterval) -> Date {
        lock.withLock {
            rebaseLocked()
            anchor = anchor.addingTimeInterval(max(0, interval))
            return anchor
        }
    }

    /// Sets the sandbox time, if it is later than now.
    @discardableResult
    public func set(_ date: Date) -> Date {
        lock.withLock {
            rebaseLocked()
            anchor = max(anchor, date)
            return anchor
        }
    }

    private func currentLocked() -> Date {
        switch mode {
        case .manual: return anchor
        case .running(let rate): return anchor.addingTimeInterval(realNow().timeIntervalSince(realAnchor) * rate)
        }
    }

    private func rebaseLocked() {
        anchor = currentLocked()
        realAnchor = realNow()
    }
}
