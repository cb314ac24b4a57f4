import NIOCore
import NIOPosix

extension KakinCommand {
    /// The subcommands that serve HTTP until stopped.
    static let serverCommands: Set<String> = ["serve", "server", "sandbox"]

    /// For the commands that serve HTTP (`serve`, `server`, `sandbox`), runs Swift concurrency's
    /// tasks on the event loop threads that serve it, so that a request does not hop between those
    /// threads and a second pool of the same size on its way through. The other commands keep
    /// Swift's own pool (`demo` waits on the terminal, which must not hold up an event loop).
    /// Call it once, from the main thread, before any task starts.
    public static func runTasksOnEventLoops(arguments: [String]) {
        guard arguments.count > 1, serverCommands.contains(arguments[1]) else { return }
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }
}
