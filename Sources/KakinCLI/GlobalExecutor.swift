import NIOCore
import NIOPosix

extension KakinCommand {
    /// Runs Swift concurrency's tasks on the event loop threads that serve HTTP, so a request
    /// does not hop between those threads and a second pool of the same size on its way through.
    /// Call it once, from the main thread, before any task starts.
    public static func runTasksOnEventLoops() {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }
}
