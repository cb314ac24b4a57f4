public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files that hold secrets (private keys, API secrets): readable by their owner only, from the
/// moment they exist.
///
/// Writing a file and then narrowing its permissions leaves a moment when anyone on the machine
/// can read it. Here the bytes go into a new file created with mode 0600 (`open(2)` with
/// `O_CREAT | O_EXCL`), synced, then renamed over the destination: readers see the old file or
/// the new one, never a half-written or world-readable one. ``create(_:at:)`` makes a file only
/// where none is, for files that several processes may make at once.
public enum SecretFile {
    /// The permissions of every file written here: read and write for the owner only.
    static let permissions: mode_t = 0o600

    /// Writes `data` to `url`, replacing any file there atomically, with mode 0600.
    public static func write(_ data: Data, to url: URL) throws {
        try withTemporaryCopy(of: data, beside: url) { temporary in
            guard rename(temporary, url.path) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
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
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }
        return created
    }

    /// Writes `data` to a new owner-only file beside `url`, synced, runs `body` with its path,
    /// and removes it if it is still there afterwards.
    private static func withTemporaryCopy(of data: Data, beside url: URL, _ body: (String) throws -> Void) throws {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, permissions)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { unlink(temporary.path) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        // The umask can only have narrowed the mode; make it exactly 0600, never wider.
        guard fchmod(descriptor, permissions) == 0 else {
            let code = errno
            try? handle.close()
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        do {
            try handle.write(contentsOf: data)
            try handle.synchronize()
            try handle.close()
        } catch {
            try? handle.close()
            throw error
        }
        try body(temporary.path)
    }
}
