import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files and folders readable by their owner only, whatever the process's umask: a ledger holds
/// every customer's signed transactions and the dashboard's session hashes.
///
/// Each file is created with its final mode by `open(2)` (`O_CREAT | O_EXCL`, mode 0600) and set
/// to exactly that mode with `fchmod(2)` before a byte is written, so it is never readable by
/// others, not even for a moment; each folder is made by `mkdir(2)` with mode 0700 and set to
/// exactly that mode. SQLite gives the write-ahead log (`-wal`) and shared-memory (`-shm`) files
/// it creates the permissions of the database file, so a ledger created here keeps all three
/// owner-only.
public enum OwnerOnlyFiles {
    /// The mode of every file made here: read and write for the owner only.
    public static let fileMode: mode_t = 0o600
    /// The mode of every folder made here: the owner only.
    public static let directoryMode: mode_t = 0o700

    /// Makes the folder at `url` and every missing folder above it, each with mode 0700. Folders
    /// already there are left as they are.
    /// - Throws: `POSIXError` when a folder cannot be made (another process making the same one at
    ///   the same moment is not an error).
    public static func createDirectory(at url: URL) throws {
        var missing: [String] = []
        var current = url.standardizedFileURL
        while !FileManager.default.fileExists(atPath: current.path) {
            missing.append(current.path)
            let parent = current.deletingLastPathComponent()
            guard parent.path != current.path else { break }
            current = parent
        }
        for path in missing.reversed() {
            if mkdir(path, directoryMode) != 0 {
                guard errno == EEXIST else { throw posixError() }
                continue
            }
            // The umask can only have narrowed the mode: make it exactly 0700.
            guard chmod(path, directoryMode) == 0 else { throw posixError() }
        }
    }

    /// Creates an empty file at `path` with mode 0600 unless a file is there already.
    /// - Returns: whether this call created it (a file already there keeps its mode).
    @discardableResult
    static func createFile(atPath path: String) throws -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, fileMode)
        guard descriptor >= 0 else {
            if errno == EEXIST { return false }
            throw posixError()
        }
        defer { close(descriptor) }
        guard fchmod(descriptor, fileMode) == 0 else { throw posixError() }
        return true
    }

    /// Writes `data` to `url` with mode 0600, replacing any file there atomically: the bytes go to
    /// a new owner-only file beside it, which is then renamed over `url`.
    static func write(_ data: Data, to url: URL) throws {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, fileMode)
        guard descriptor >= 0 else { throw posixError() }
        defer { unlink(temporary) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            guard fchmod(descriptor, fileMode) == 0 else { throw posixError() }
            try handle.write(contentsOf: data)
            try handle.synchronize()
            try handle.close()
        } catch {
            try? handle.close()
            throw error
        }
        guard rename(temporary, url.path) == 0 else { throw posixError() }
    }

    /// Sets the file or folder at `path` to `mode` exactly.
    static func setMode(_ mode: mode_t, atPath path: String) throws {
        guard chmod(path, mode) == 0 else { throw posixError() }
    }

    /// The permission bits of the file at `path` (`nil` when there is none).
    static func mode(atPath path: String) -> mode_t? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o7777
    }

    private static func posixError() -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
}
