import Foundation
import KakinLedger

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's open-file limit and the descriptors it has open.
///
/// A server that runs out of descriptors cannot accept connections, open files or reach its
/// database. Many systems start processes with a soft limit of 1,024 while allowing far more:
/// the server raises its soft limit to the hard one at start, and reports both figures in
/// `/metrics` (`kakin_process_open_fds`, `kakin_process_max_fds`), so that an operator sees the
/// limit coming.
public enum ProcessLimits {
    /// Raises the soft limit on open files to the hard limit; the limits before and after, or
    /// `nil` when they cannot be read or changed.
    @discardableResult
    public static func raiseOpenFileLimit() -> (before: UInt64, after: UInt64)? {
        var limit = rlimit()
        guard getrlimit(Self.openFiles, &limit) == 0 else { return nil }
        let before = UInt64(limit.rlim_cur)
        guard limit.rlim_cur < limit.rlim_max else { return (before, before) }
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        #if canImport(Darwin)
        // macOS refuses a soft limit above OPEN_MAX even when the hard limit is unlimited.
        raised.rlim_cur = min(raised.rlim_cur, rlim_t(OPEN_MAX))
        #endif
        guard setrlimit(Self.openFiles, &raised) == 0 else { return (before, before) }
        return (before, UInt64(raised.rlim_cur))
    }

    /// The soft limit on open files.
    public static var openFileLimit: UInt64? {
        var limit = rlimit()
        guard getrlimit(Self.openFiles, &limit) == 0 else { return nil }
        return UInt64(limit.rlim_cur)
    }

    /// How many descriptors the process has open (`/proc/self/fd` on Linux, `/dev/fd` elsewhere).
    public static var openDescriptors: Int? {
        for directory in ["/proc/self/fd", "/dev/fd"] {
            // The listing itself holds one descriptor while it runs.
            if let names = try? FileManager.default.contentsOfDirectory(atPath: directory) { return max(0, names.count - 1) }
        }
        return nil
    }

    #if canImport(Glibc)
    private static let openFiles = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let openFiles = RLIMIT_NOFILE
    #endif
}
