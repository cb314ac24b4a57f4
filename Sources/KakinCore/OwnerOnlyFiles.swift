public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files and folders readable by their owner only, from the moment they exist and whatever the
/// process's umask: private keys, API secrets, a ledger (every customer's signed transactions and
/// the dashboard's session hashes) and its backups.
///
/// Writing a file and then narrowing its permissions leaves a moment when anyone on the machine
/// can read it. Here each file is created with its final mode by `open(2)` (`O_CREAT | O_EXCL`,
/// mode 0600) and set to exactly that mode with `fchmod(2)` before a byte is written; each folder
/// is made by `mkdir(2)` with mode 0700 and set to exactly that mode. ``write(_:to:)`` and
/// ``create(_:at:)`` write the bytes to a new file beside the destination, sync it, then rename or
/// link it into place: readers see the old file or the new one, never a half-written or
/// world-readable one. (SQLite gives the `-wal` and `-shm` files it creates the permissions of the
/// database file, so a ledger file created here keeps all three owner-only.)
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
            try setMode(directoryMode, atPath: path)
        }
    }

    /// Creates an empty file at `path` with mode 0600 unless a file is there already.
    /// - Returns: whether this call created it (a file already there keeps its mode).
    @discardableResult
    public static func createFile(atPath path: String) throws -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, fileMode)
        guard descriptor >= 0 else {
            if errno == EEXIST { return false }
            throw posixError()
        }
        defer { close(descriptor) }
        guard fchmod(descriptor, fileMode) == 0 else { throw posixError() }
        return true
    }

    /// Writes `data` to `url` with mode 0600, replacing any file there atomically.
    public static func write(_ data: Data, to url: URL) throws {
        try withTemporaryCopy(of: data, beside: url) { temporary in
            guard rename(temporary, url.path) == 0 else { throw posixError() }
        }
    }

    /// Writes `data` to `url` with mode 0600 unless a file is there already, atomically: of
    /// several processes creating the same file at once, exactly one creates it (`true`) and the
    /// others leave it as the winner wrote it (`false`), whole, never half-written. The bytes go
    /// to a new file first, which is then hard-linked at `url` (`link(2)` never replaces a file).
    public static func create(_ data: Data, at url: URL) throws -> Bool {
        var created = false
        try withTemporaryCopy(of: data, beside: url) { temporary in
            if link(temporary, url.path) == 0 {
                created = true
            } else if errno != EEXIST {
                throw posixError()
            }
        }
        return created
    }

    /// Sets the file or folder at `path` to `mode` exactly.
    public static func setMode(_ mode: mode_t, atPath path: String) throws {
        guard chmod(path, mode) == 0 else { throw posixError() }
    }

    /// The permission bits of the file at `path` (`nil` when there is none).
    public static func mode(atPath path: String) -> mode_t? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o7777
    }

    /// Writes `data` to a new owner-only file beside `url`, synced, runs `body` with its path,
    /// and removes it if it is still there afterwards.
    private static func withTemporaryCopy(of data: Data, beside url: URL, _ body: (String) throws -> Void) throws {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, fileMode)
        guard descriptor >= 0 else { throw posixError() }
        defer { unlink(temporary) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            // The umask can only have narrowed the mode: make it exactly 0600, never wider.
            guard fchmod(descriptor, fileMode) == 0 else { throw posixError() }
            try handle.write(contentsOf: data)
            try handle.synchronize()
            try handle.close()
        } catch {
            try? handle.close()
            throw error
        }
        try body(temporary)
    }

    private static func posixError() -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
}
