import ArgumentParser
import Foundation
import NIOCore
import NIOPosix

extension KakinCommand {
    /// The subcommands that serve HTTP until stopped.
    static let serverCommands: Set<String> = ["serve", "server", "sandbox"]

    /// For the commands that serve HTTP (`serve`, `server`, `sandbox`), runs Swift concurrency's
    /// tasks on the event loop threads that serve it, so that a request does not hop between those
    /// threads and a second pool of the same size on its way through. The other commands keep
    /// Swift's own pool (`demo` waits on the terminal, which must not hold up an event loop).
    ///
    /// There is one event loop thread per core the process may use (a container's CPU limit
    /// counts), unless `--threads N` or `KAKIN_THREADS` says how many: several servers sharing one
    /// machine each take their share of its cores, instead of each running as many busy threads as
    /// the machine has cores and all of them taking turns.
    ///
    /// Call it once, from the main thread, before any task starts.
    public static func runTasksOnEventLoops(
        arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        guard arguments.count > 1, serverCommands.contains(arguments[1]) else { return }
        if let threads = eventLoopThreads(arguments: arguments, environment: environment) {
            NIOSingletons.groupLoopCountSuggestion = threads
        }
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }

    /// The event loop threads asked for by `--threads N` (or `--threads=N`), else by
    /// `KAKIN_THREADS`; `nil` when neither asks for a positive number (the command's own parsing
    /// then reports a bad value).
    static func eventLoopThreads(arguments: [String], environment: [String: String]) -> Int? {
        var value = environment["KAKIN_THREADS"]
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if argument == "--" { break }
            if argument == "--threads", index + 1 < arguments.endIndex {
                value = arguments[index + 1]
                index += 1
            } else if argument.hasPrefix("--threads=") {
                value = String(argument.dropFirst("--threads=".count))
            }
            index += 1
        }
        guard let value, let threads = Int(value), threads > 0 else { return nil }
        return threads
    }

    /// Checks a command's `--threads` option (the threads themselves are started before the
    /// command runs, by ``runTasksOnEventLoops(arguments:environment:)``).
    static func validateThreads(_ threads: Int?, environment: [String: String]) throws {
        if let threads, threads < 1 {
            throw ValidationError("--threads must be 1 or more, not \(threads)")
        }
        if threads == nil, let value = environment["KAKIN_THREADS"], (Int(value) ?? 0) < 1 {
            throw ValidationError("KAKIN_THREADS must be a number of 1 or more, not \(value)")
        }
    }
}
