import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A PostgreSQL cluster of one test's own, made as `scripts/postgres` makes the shared one:
/// `initdb` in a temporary directory (trust authentication, user `kakin`), run as `nobody` when
/// this is root, listening on 127.0.0.1 at a free port, with fsync on. Unlike the shared cluster
/// it may be stopped and started again (on the same port and data directory) while the test
/// runs. ``remove()`` stops it at once and deletes its directory.
public final class PrivatePostgresCluster: Sendable {
    /// The directory of `initdb`, `pg_ctl` and `postgres`: the newest /usr/lib/postgresql/*/bin
    /// that has all three, or where `initdb` on PATH lives; `nil` when there is none.
    public static let binaries: URL? = {
        let manager = FileManager.default
        func complete(_ directory: URL) -> Bool {
            ["initdb", "pg_ctl", "postgres"].allSatisfy {
                manager.isExecutableFile(atPath: directory.appendingPathComponent($0).path)
            }
        }
        let versions = ((try? manager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .sorted { $0.compare($1, options: .numeric) == .orderedDescending }
        for version in versions {
            let directory = URL(fileURLWithPath: "/usr/lib/postgresql/\(version)/bin")
            if complete(directory) { return directory }
        }
        if let initdb = executableOnPath("initdb"), executableOnPath("pg_ctl") != nil {
            let directory = initdb.resolvingSymlinksInPath().deletingLastPathComponent()
            if complete(directory) { return directory }
        }
        return nil
    }()

    /// Whether the cluster's programs run as `nobody` (initdb refuses to run as root).
    public static let runsAsNobody = getuid() == 0

    /// `runuser` (or `su` without it), to run the programs as `nobody` when this is root.
    public static let switchUser: URL? = executableOnPath("runuser") ?? executableOnPath("su")

    /// Why a private cluster cannot be made here, or `nil` when it can.
    public static var unavailableReason: String? {
        if binaries == nil { return "initdb and pg_ctl are found neither in /usr/lib/postgresql/*/bin nor on PATH" }
        if runsAsNobody, switchUser == nil { return "running as root, and neither runuser nor su is found" }
        return nil
    }

    /// Where `name` is on PATH (or in the system's program folders), if anywhere.
    public static func executableOnPath(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        for directory in directories {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// The cluster's directory: `data` (the cluster), `run` (its socket and server log) and
    /// `pg_ctl.log` (what pg_ctl and initdb printed).
    public let directory: URL
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    private let removed = Mutex(false)

    /// Where the cluster's files are.
    public var dataDirectory: URL { directory.appendingPathComponent("data") }
    /// Where its socket and server log are.
    public var runDirectory: URL { directory.appendingPathComponent("run") }
    /// The server's log.
    public var serverLog: URL { runDirectory.appendingPathComponent("postgres.log") }
    /// What pg_ctl and initdb printed.
    public var toolLog: URL { directory.appendingPathComponent("pg_ctl.log") }

    /// `postgres://kakin@127.0.0.1:PORT/postgres`, as `scripts/postgres` exports it.
    public var url: String { "postgres://kakin@127.0.0.1:\(port)/postgres" }

    private init(directory: URL, port: Int) {
        self.directory = directory
        self.port = port
    }

    /// Makes a cluster and starts it on a free port (another one when the port was taken
    /// meanwhile). The caller calls ``remove()`` at the end, also when the test fails.
    public static func start() async throws -> PrivatePostgresCluster {
        guard unavailableReason == nil, let binaries else {
            throw ClusterError("no private PostgreSQL cluster: \(unavailableReason ?? "")")
        }
        let manager = FileManager.default
        let directory = manager.temporaryDirectory.appendingPathComponent("kakin-faults-\(UUID().uuidString)")
        try manager.createDirectory(at: directory, withIntermediateDirectories: true)
        chmod(directory.path, 0o755)
        var cluster = PrivatePostgresCluster(directory: directory, port: 0)
        do {
            for name in ["data", "run"] {
                let path = directory.appendingPathComponent(name).path
                try manager.createDirectory(atPath: path, withIntermediateDirectories: false)
                if runsAsNobody, let nobody = getpwnam("nobody") {
                    guard chown(path, nobody.pointee.pw_uid, nobody.pointee.pw_gid) == 0 else {
                        throw ClusterError("cannot give \(path) to nobody: errno \(errno)")
                    }
                }
            }
            chmod(cluster.dataDirectory.path, 0o700)
            // initdb skips its final fsync (-N), which only matters if the machine crashes under
            // a cluster thrown away with the test; the server itself runs with fsync on.
            let initialized = try await cluster.run(
                binaries.appendingPathComponent("initdb"),
                ["-D", cluster.dataDirectory.path, "-U", "kakin", "--auth=trust", "-E", "UTF8", "--no-locale", "-N"])
            guard initialized == 0 else { throw ClusterError("initdb failed (\(initialized)): \(cluster.tools)") }
            for _ in 1...5 {
                cluster = PrivatePostgresCluster(directory: directory, port: try freePort())
                if try await cluster.startServer() == 0 { return cluster }
            }
            throw ClusterError("PostgreSQL did not start on any of 5 free ports: \(cluster.tools) \(cluster.log)")
        } catch {
            cluster.remove()
            throw error
        }
    }

    /// Starts PostgreSQL again on the same port and data directory (after a stop of any mode:
    /// after `immediate` it recovers from its write-ahead log first); returns once it accepts
    /// connections.
    public func start() async throws {
        let status = try await startServer()
        guard status == 0 else { throw ClusterError("pg_ctl start failed (\(status)): \(tools) \(log)") }
    }

    /// `pg_ctl stop -m MODE`: `immediate` kills every process at once (as a crash would, without
    /// losing what was committed), `fast` ends the sessions and checkpoints, `smart` waits for
    /// the sessions to end. Returns once the server is gone.
    public func stop(mode: String) async throws {
        guard let binaries = Self.binaries else { return }
        let status = try await run(
            binaries.appendingPathComponent("pg_ctl"), ["-D", dataDirectory.path, "-m", mode, "-w", "-t", "60", "stop"])
        guard status == 0 else { throw ClusterError("pg_ctl stop -m \(mode) failed (\(status)): \(tools)") }
    }

    /// ``stop(mode:)`` then ``start()``.
    public func restart(mode: String) async throws {
        try await stop(mode: mode)
        try await start()
    }

    /// Stops the server with `-m immediate` when it runs, and deletes the directory. Blocks (it
    /// runs in `defer`); does nothing the second time.
    public func remove() {
        guard !removed.withLock({ let was = $0; $0 = true; return was }) else { return }
        if let binaries = Self.binaries,
            FileManager.default.fileExists(atPath: dataDirectory.appendingPathComponent("postmaster.pid").path)
        {
            _ = runBlocking(
                binaries.appendingPathComponent("pg_ctl"),
                ["-D", dataDirectory.path, "-m", "immediate", "-w", "-t", "30", "stop"])
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The server's log so far.
    public var log: String { (try? String(contentsOf: serverLog, encoding: .utf8)) ?? "" }
    /// What initdb and pg_ctl printed so far.
    public var tools: String { (try? String(contentsOf: toolLog, encoding: .utf8)) ?? "" }

    private func startServer() async throws -> Int32 {
        guard let binaries = Self.binaries else { throw ClusterError("pg_ctl not found") }
        let options = [
            "-c listen_addresses=127.0.0.1", "-p \(port)", "-c unix_socket_directories=\(runDirectory.path)",
            "-c fsync=on", "-c synchronous_commit=on", "-c max_connections=100",
        ]
        return try await run(
            binaries.appendingPathComponent("pg_ctl"),
            [
                "-D", dataDirectory.path, "-w", "-t", "60", "-l", serverLog.path, "-o", options.joined(separator: " "),
                "start",
            ])
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` and `…_addchdir_np`, which Swift's
    /// Glibc module does not import.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias Chdir = @convention(c) (
        UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>
    ) -> Int32
    private static let addCloseFrom: CloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: CloseFrom.self)
    }
    private static let addChdir: Chdir? = dlsym(nil, "posix_spawn_file_actions_addchdir_np").map {
        unsafeBitCast($0, to: Chdir.self)
    }

    /// Starts `program` as the cluster's owner in the cluster's directory, its output appended to
    /// ``toolLog``. With posix_spawn rather than Foundation's `Process`, and every descriptor but
    /// the standard ones closed in the child: `Process` learns of an exit through a socket its
    /// child inherits, and the server `pg_ctl start` leaves running would inherit it too, so the
    /// exit of `pg_ctl` would be noticed only when PostgreSQL stops.
    private func spawn(_ program: URL, _ arguments: [String]) throws -> pid_t {
        var command = [program.path] + arguments
        if Self.runsAsNobody, let switchUser = Self.switchUser {
            if switchUser.lastPathComponent == "runuser" {
                command = [switchUser.path, "-u", "nobody", "--"] + command
            } else {
                let quoted = command.map { "'" + $0.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }
                command = [switchUser.path, "-s", "/bin/sh", "nobody", "-c", quoted.joined(separator: " ")]
            }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, toolLog.path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        if let addChdir = Self.addChdir { _ = addChdir(&actions, directory.path) }
        if let addCloseFrom = Self.addCloseFrom {
            _ = addCloseFrom(&actions, 3)
        } else {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
                if let fd = Int32(name), fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
            }
        }
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        guard result == 0 else {
            throw ClusterError("cannot run \(command[0]): \(String(cString: strerror(result)))")
        }
        return pid
    }

    /// Waits for `pid` to end; its exit status (128 + the signal when a signal ended it).
    private static func waitForExit(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { return -1 }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Runs `program` to its end without holding a thread of the tests' pool; its exit status.
    private func run(_ program: URL, _ arguments: [String]) async throws -> Int32 {
        let pid = try spawn(program, arguments)
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Self.waitForExit(pid)) }
        }
    }

    /// Runs `program` to its end, blocking this thread (for ``remove()``, which runs in `defer`).
    private func runBlocking(_ program: URL, _ arguments: [String]) -> Int32 {
        guard let pid = try? spawn(program, arguments) else { return -1 }
        return Self.waitForExit(pid)
    }
}

/// A private cluster could not be made, started or stopped.
public struct ClusterError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
