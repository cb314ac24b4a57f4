import NIOCore
import NIOPosix

/// The event loop a caller waits on, so that work done for it elsewhere (a group's commit, a
/// batch of reads) is handed back there: one hop per loop for a whole batch, where resuming each
/// caller from the worker would wake whichever loop comes next and then hop again to the
/// caller's connection.
enum HomeLoop {
    /// The event loops of the process-wide group, which never shut down.
    private static let loops: [any EventLoop] = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())

    /// The process-wide group's loop the caller runs on, or `nil` elsewhere.
    static var current: (any EventLoop)? {
        MultiThreadedEventLoopGroup.currentEventLoop.flatMap { running in loops.first { $0 === running } }
    }

    /// Runs each `resume` on its loop (at once where there is none), one task per loop.
    static func resume(_ answers: [(home: (any EventLoop)?, resume: @Sendable () -> Void)]) {
        var batches: [(loop: any EventLoop, resumes: [@Sendable () -> Void])] = []
        for (home, resume) in answers {
            guard let home else {
                resume()
                continue
            }
            if let index = batches.firstIndex(where: { $0.loop === home }) {
                batches[index].resumes.append(resume)
            } else {
                batches.append((home, [resume]))
            }
        }
        for (loop, resumes) in batches {
            loop.execute {
                for resume in resumes { resume() }
            }
        }
    }
}
