import Foundation

/// Named points in the delivery path where a test process can be killed on purpose, to prove
/// that dying anywhere loses nothing and grants nothing twice.
///
/// Compiled only into debug builds (the package defines `KAKIN_CRASH_POINTS` for the debug
/// configuration): a release build of an app carries no way to kill itself. In a debug build it
/// is inert unless the environment variable `KAKIN_CRASH_POINT` names the point; then the process
/// kills itself with SIGKILL there, as an out-of-memory kill or a force quit would.
enum CrashPoint {
    #if KAKIN_CRASH_POINTS
    static let armed: String? = ProcessInfo.processInfo.environment["KAKIN_CRASH_POINT"]

    static func reach(_ name: String) {
        guard let armed, armed == name else { return }
        kill(getpid(), SIGKILL)
    }
    #else
    @inline(__always) static func reach(_ name: String) {}
    #endif
}
