public import Foundation
import Synchronization

/// The sandbox's sense of time: injected, so that every scenario is deterministic.
///
/// Three ways to run it, combinable:
/// - real time (the default);
/// - accelerated, like Xcode's StoreKit testing time rates: `rate` sandbox seconds pass for every
///   real second (a monthly subscription renews every 30 seconds at a rate of 86 400);
/// - advanced explicitly, by the control API or a test: ``advance(by:)`` moves it forward at once.
///
/// Tests use ``manual(at:)``, which never moves by itself: nothing sleeps.
public final class SandboxClock: Sendable {
    /// How the clock runs.
    public enum Mode: Sendable, Equatable {
        /// Real time scaled by `rate` (1 = real time), from the moment the mode was set.
        case running(rate: Double)
        /// Stopped: only ``advance(by:)`` and ``set(_:)`` move it.
        case manual
    }

    private struct State {
        var mode: Mode
        /// The sandbox time when the mode was last set or the clock last moved.
        var anchor: Date
        /// The real time at that moment.
        var realAnchor: Date

        func current(realNow: Date) -> Date {
            switch mode {
            case .manual: anchor
            case .running(let rate): anchor.addingTimeInterval(realNow.timeIntervalSince(realAnchor) * rate)
            }
        }

        /// Moves the anchors to now, so a change of mode or an advance starts from the present.
        mutating func rebase(realNow: Date) {
            anchor = current(realNow: realNow)
            realAnchor = realNow
        }
    }

    private let realNow: @Sendable () -> Date
    private let state: Mutex<State>

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
        let real = realNow()
        state = Mutex(State(mode: mode, anchor: start ?? real, realAnchor: real))
    }

    /// A stopped clock at `date`, for tests.
    public static func manual(at date: Date) -> SandboxClock {
        SandboxClock(mode: .manual, start: date)
    }

    /// The current sandbox time, in whole milliseconds: the App Store's dates have no finer unit.
    public func now() -> Date {
        let real = realNow()
        let current = state.withLock { $0.current(realNow: real) }
        return Date(epochMilliseconds: current.epochMilliseconds)
    }

    /// The current mode.
    public var currentMode: Mode { state.withLock { $0.mode } }

    /// Changes how the clock runs from now on, without a jump.
    public func setMode(_ newMode: Mode) {
        let real = realNow()
        state.withLock { state in
            state.rebase(realNow: real)
            state.mode = newMode
        }
    }

    /// Moves the sandbox time forward. Negative intervals are ignored: time never runs backwards.
    @discardableResult
    public func advance(by interval: TimeInterval) -> Date {
        let real = realNow()
        return state.withLock { state in
            state.rebase(realNow: real)
            state.anchor = state.anchor.addingTimeInterval(max(0, interval))
            return state.anchor
        }
    }

    /// Sets the sandbox time, if it is later than now.
    @discardableResult
    public func set(_ date: Date) -> Date {
        let real = realNow()
        return state.withLock { state in
            state.rebase(realNow: real)
            state.anchor = max(state.anchor, date)
            return state.anchor
        }
    }
}
