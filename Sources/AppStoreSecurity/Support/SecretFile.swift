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
/// the new one, never a half-written or world-readable one.
public enum SecretFile {
    /// The permissions of every file written here: read and write for the owner only.
    static let permissions: mode_t = 0o600

    /// Writes `data` to `url`, replacing any file there atomically, with mode 0600.
    public static func write(_ data: Data, to url: URL) throws {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, permissions)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var renamed = false
        defer { if !renamed { unlink(temporary.path) } }
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
        guard rename(temporary.path, url.path) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        renamed = true
    }
}
